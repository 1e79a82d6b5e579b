"""Discovery documents: /version, legacy /api, /apis, /api/v1, /apis/<g>/<v>, and aggregated.

kubectl 1.30+ asks for aggregated discovery (apidiscovery.k8s.io v2), 1.27-1.29 for v2beta1;
the answer must follow the Accept header and carry the exact Content-Type, or kubectl says
"the server doesn't have a resource type". Anything else gets the legacy documents.
"""

from __future__ import annotations

from typing import Any

from kube.resources import RESOURCES, ResourceInfo

__all__ = ["version_info", "api_versions", "api_group_list", "api_resource_list", "aggregated_discovery",
           "aggregated_media_type", "groups"]

SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "scale": ["get", "patch", "update"],
                     "binding": ["create"], "log": ["get"], "finalize": ["update"], "eviction": ["create"],
                     "token": ["create"]}


# The Kubernetes minor version we report. It also decides which kubectl the version-dispatching
# `kubectl` runs; from 1.32 on, kubectl's typed commands (`create namespace`, `create token`,
# `auth can-i`) send protobuf bodies, which this server does not decode yet, so it reports 1.30.
KUBE_MINOR = "30"


def version_info() -> dict[str, str]:
    return {"major": "1", "minor": KUBE_MINOR, "gitVersion": f"v1.{KUBE_MINOR}.0-picokube", "gitCommit": "picokube",
            "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "python3",
            "compiler": "cpython", "platform": "linux/amd64"}


def groups() -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for r in RESOURCES:
        if r.group and (r.group, r.version) not in seen:
            seen.append((r.group, r.version))
    return seen


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def api_group_list() -> dict[str, Any]:
    items = []
    for group, version in groups():
        gv = {"groupVersion": f"{group}/{version}", "version": version}
        items.append({"name": group, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": items}


def _subresource_kind(info: ResourceInfo, sub: str) -> tuple[str, str, str]:
    if sub == "scale":
        return "autoscaling", "v1", "Scale"
    if sub == "binding":
        return "", "v1", "Binding"
    if sub == "eviction":
        return "policy", "v1", "Eviction"
    if sub == "token":
        return "authentication.k8s.io", "v1", "TokenRequest"
    return info.group, info.version, info.kind


def api_resource_list(group: str, version: str) -> dict[str, Any] | None:
    served = [r for r in RESOURCES if r.group == group and r.version == version]
    if not served:
        return None
    resources: list[dict[str, Any]] = []
    for r in served:
        entry: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                                 "kind": r.kind, "verbs": list(r.verbs)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        resources.append(entry)
        for sub in r.subresources:
            g, v, k = _subresource_kind(r, sub)
            sub_entry: dict[str, Any] = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                         "kind": k, "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])}
            if (g, v) != (r.group, r.version):
                sub_entry.update({"group": g, "version": v})
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


def aggregated_discovery(*, legacy: bool, version: str) -> dict[str, Any]:
    """The APIGroupDiscoveryList for /api (legacy=True) or /apis."""
    items = []
    wanted = [("", "v1")] if legacy else groups()
    for group, gv in wanted:
        resources = []
        for r in RESOURCES:
            if r.group != group or r.version != gv:
                continue
            entry: dict[str, Any] = {
                "resource": r.plural, "singularResource": r.singular,
                "scope": "Namespaced" if r.namespaced else "Cluster",
                "responseKind": {"group": r.group, "version": r.version, "kind": r.kind}, "verbs": list(r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            subs = []
            for sub in r.subresources:
                g, v, k = _subresource_kind(r, sub)
                subs.append({"subresource": sub, "responseKind": {"group": g, "version": v, "kind": k},
                             "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])})
            if subs:
                entry["subresources"] = subs
            resources.append(entry)
        items.append({"metadata": {"name": group}, "versions": [{"version": gv, "freshness": "Current",
                                                                  "resources": resources}]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}", "metadata": {},
            "items": items}
