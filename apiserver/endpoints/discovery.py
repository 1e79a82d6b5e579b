"""Discovery documents: /version, legacy /api, /apis, /api/v1, /apis/<g>/<v>, and aggregated.

kubectl 1.30+ asks for aggregated discovery (apidiscovery.k8s.io v2), 1.27-1.29 for v2beta1;
the answer must follow the Accept header and carry the exact Content-Type, or kubectl says
"the server doesn't have a resource type". Anything else gets the legacy documents.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.resource_registry import ResourceRegistry, ServedResource
from apiserver.registry.rest.interfaces import Kind, verbs_of

__all__ = ["version_info", "openapi_version", "api_versions", "api_group", "api_group_list", "api_resource_list",
           "aggregated_discovery", "aggregated_media_type"]

# The Kubernetes minor version we report. It also decides which kubectl the version-dispatching
# `kubectl` runs: 1.33, the newest served faithfully (its typed commands send protobuf bodies and
# ask for protobuf answers, both of which the server speaks).
KUBE_MINOR = "33"


def version_info() -> dict[str, str]:
    return {"major": "1", "minor": KUBE_MINOR, "gitVersion": f"v1.{KUBE_MINOR}.0-picokube", "gitCommit": "picokube",
            "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "python3",
            "compiler": "cpython", "platform": "linux/amd64"}


def openapi_version() -> str:
    """The `info.version` of the OpenAPI documents: the reported release (`v1.33.0`)."""
    return f"v1.{KUBE_MINOR}.0"


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list(registry: ResourceRegistry) -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [api_group(group, versions) for group, versions in registry.groups()]}


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    """One APIGroup's body: its versions, the preferred (first) one as preferredVersion."""
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def _subresources(served: ServedResource) -> list[tuple[str, Kind, list[str]]]:
    """(name, response kind, verbs) of each subresource, derived from its storage."""
    return [(name, storage.kind, verbs_of(storage)) for name, storage in served.subresources.items()]


def _served(registry: ResourceRegistry, group: str, version: str) -> list[ServedResource]:
    return [s for s in registry if s.info.group == group and s.info.version == version]


def api_resource_list(registry: ResourceRegistry, group: str, version: str) -> dict[str, Any] | None:
    served = _served(registry, group, version)
    if not served:
        return None
    resources: list[dict[str, Any]] = []
    for s in served:
        r = s.info
        entry: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                                 "kind": r.kind, "verbs": verbs_of(s.storage)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        resources.append(entry)
        for sub, kind, verbs in _subresources(s):
            sub_entry: dict[str, Any] = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                         "kind": kind.kind, "verbs": verbs}
            if (kind.group, kind.version) != (r.group, r.version):
                sub_entry.update({"group": kind.group, "version": kind.version})
            resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def aggregated_media_type(accept: str) -> str | None:
    """`v2` or `v2beta1` when the client accepts aggregated discovery, else None."""
    for part in accept.split(","):
        if "as=APIGroupDiscoveryList" in part and "g=apidiscovery.k8s.io" in part:
            if "v=v2beta1" in part:
                return "v2beta1"
            if "v=v2" in part:
                return "v2"
    return None


def _aggregated_entry(s: ServedResource) -> dict[str, Any]:
    r = s.info
    entry: dict[str, Any] = {
        "resource": r.plural, "singularResource": r.singular, "scope": "Namespaced" if r.namespaced else "Cluster",
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind}, "verbs": verbs_of(s.storage),
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    subs = [{"subresource": sub, "responseKind": {"group": k.group, "version": k.version, "kind": k.kind},
             "verbs": verbs} for sub, k, verbs in _subresources(s)]
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated_discovery(registry: ResourceRegistry, *, legacy: bool, version: str) -> dict[str, Any]:
    """The APIGroupDiscoveryList for /api (legacy=True) or /apis."""
    items = []
    wanted = [("", ["v1"])] if legacy else registry.groups()
    for group, versions in wanted:
        items.append({"metadata": {"name": group}, "versions": [
            {"version": v, "freshness": "Current",
             "resources": [_aggregated_entry(s) for s in _served(registry, group, v)]} for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}", "metadata": {},
            "items": items}
