"""What the server serves, read from its discovery documents, and the names users type for it.

Mirrors client-go's discovery client (aggregated discovery, `apidiscovery.k8s.io/v2`) and
apimachinery's `DefaultRESTMapper` with kubectl's `shortcutExpander` in front of it. The
server's resource registry may grow while it runs (custom resources), so clients must not
resolve names from a table compiled into them: `discover` asks the server (two GETs, `/api`
and `/apis`, each answering every resource of every version at once) and builds a
`RESTMapper` from the answer.

Invariants:
- A `RESTMapper` is immutable and holds top-level resources only (subresources are listed
  on their parent), in kubectl's priority order: the legacy group first, then the groups in
  the order the server lists them; within a group, the preferred version first.
- Name resolution follows kubectl's order: exact plural or singular name, then short name,
  then kind; `NAME.GROUP` restricts the group, `NAME.VERSION.GROUP` the version as well.
  The first match in priority order wins, as in kubectl.
- A server without aggregated discovery is read through the legacy documents instead
  (one more GET per group version), as client-go falls back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kube.client.rest import RESTClient
from kube.resources import ResourceInfo

__all__ = ["AGGREGATED_ACCEPT", "RESTMapper", "discover", "resources_from_aggregated",
           "resources_from_resource_list"]

# The aggregated form first; plain JSON still accepted so that an older server answers with
# its legacy documents instead of 406.
AGGREGATED_ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"


class RESTMapper:
    """Maps typed names (`po`, `deployments.apps`) and manifest apiVersion+kind to resources.

    Pure and immutable once built: safe to share and to call from any task.
    """

    def __init__(self, resources: Iterable[ResourceInfo]) -> None:
        self._resources = tuple(resources)

    @property
    def resources(self) -> tuple[ResourceInfo, ...]:
        """Every served resource in every version, in priority order."""
        return self._resources

    def preferred(self) -> list[ResourceInfo]:
        """Each resource in its group's preferred version only (what `api-resources` lists)."""
        first_version: dict[str, str] = {}
        for r in self._resources:
            first_version.setdefault(r.group, r.version)
        return [r for r in self._resources if first_version[r.group] == r.version]

    def resource_for(self, name: str) -> ResourceInfo | None:
        """The resource `name` means (`pods`, `pod`, `po`, `Pod`, `deploy.apps`, `deployments.v1.apps`), or None."""
        lowered = name.lower()
        if lowered.count(".") >= 2:
            resource, version, group = lowered.split(".", 2)
            found = self._match(resource, group=group, version=version)
            if found is not None:
                return found
        resource, _, group = lowered.partition(".")
        return self._match(resource, group=group if "." in lowered else None, version=None)

    def kind_for(self, api_version: str, kind: str) -> ResourceInfo | None:
        """The resource serving exactly `kind` in `api_version` (`apps/v1`, `Deployment`), or None."""
        return next((r for r in self._resources if r.api_version == api_version and r.kind == kind), None)

    def category(self, name: str) -> list[ResourceInfo]:
        """The resources in category `name` (`all`), one per group and resource, in priority order."""
        out: dict[tuple[str, str], ResourceInfo] = {}
        for r in self._resources:
            if name in r.categories:
                out.setdefault((r.group, r.plural), r)
        return list(out.values())

    def _match(self, resource: str, *, group: str | None, version: str | None) -> ResourceInfo | None:
        candidates = [r for r in self._resources
                      if (group is None or r.group == group) and (version is None or r.version == version)]
        for matches in (lambda r: resource in (r.plural, r.singular),
                        lambda r: resource in r.short_names,
                        lambda r: resource == r.kind.lower()):
            found = next((r for r in candidates if matches(r)), None)
            if found is not None:
                return found
        return None


def _info(*, group: str, version: str, entry: dict[str, Any], plural: str, singular: str, kind: str,
          namespaced: bool, subresources: tuple[str, ...]) -> ResourceInfo:
    """One ResourceInfo; the singular defaults to the lower-cased kind, as the RESTMapper does."""
    return ResourceInfo(group, version, kind, plural, singular or kind.lower(), namespaced,
                        short_names=tuple(entry.get("shortNames") or ()),
                        categories=tuple(entry.get("categories") or ()), subresources=subresources,
                        verbs=tuple(entry.get("verbs") or ()), has_status="status" in subresources)


def resources_from_aggregated(doc: dict[str, Any]) -> list[ResourceInfo]:
    """The resources of one APIGroupDiscoveryList, each group's versions in the order listed."""
    by_group: dict[str, list[ResourceInfo]] = {}
    for item in doc.get("items") or []:
        group = str((item.get("metadata") or {}).get("name") or "")
        for v in item.get("versions") or []:
            for entry in v.get("resources") or []:
                kind = str((entry.get("responseKind") or {}).get("kind") or "")
                subs = tuple(str(s.get("subresource")) for s in entry.get("subresources") or [])
                by_group.setdefault(group, []).append(_info(
                    group=group, version=str(v.get("version")), entry=entry, plural=str(entry.get("resource")),
                    singular=str(entry.get("singularResource") or ""), kind=kind,
                    namespaced=entry.get("scope") == "Namespaced", subresources=subs))
    return [r for infos in by_group.values() for r in infos]


def resources_from_resource_list(doc: dict[str, Any]) -> list[ResourceInfo]:
    """The top-level resources of one legacy APIResourceList (`/api/v1`, `/apis/apps/v1`)."""
    group, _, version = str(doc.get("groupVersion") or "").rpartition("/")
    entries = doc.get("resources") or []
    subs: dict[str, list[str]] = {}
    for e in entries:
        parent, slash, sub = str(e.get("name")).partition("/")
        if slash:
            subs.setdefault(parent, []).append(sub)
    return [_info(group=group, version=version, entry=e, plural=str(e["name"]),
                  singular=str(e.get("singularName") or ""), kind=str(e.get("kind") or ""),
                  namespaced=bool(e.get("namespaced")), subresources=tuple(subs.get(str(e["name"]), ())))
            for e in entries if "/" not in str(e.get("name"))]


async def _legacy(client: RESTClient, api: dict[str, Any], apis: dict[str, Any]) -> list[ResourceInfo]:
    paths = [f"/api/{v}" for v in api.get("versions") or []]
    for g in apis.get("groups") or []:
        preferred = (g.get("preferredVersion") or {}).get("groupVersion")
        versions = [str(v.get("groupVersion")) for v in g.get("versions") or []]
        paths += [f"/apis/{gv}" for gv in sorted(versions, key=lambda gv: gv != preferred)]
    out: list[ResourceInfo] = []
    for path in paths:
        out += resources_from_resource_list(await client.request("GET", path))
    return out


async def discover(client: RESTClient) -> RESTMapper:
    """A RESTMapper of everything the server serves now, read through `client`.

    Two GETs against a server with aggregated discovery. Raises what `client.request`
    raises (`ApiError`, and httpx's errors when the server cannot be reached); never falls
    back to a compiled-in table.
    """
    headers = {"Accept": AGGREGATED_ACCEPT}
    api = await client.request("GET", "/api", headers=headers)
    apis = await client.request("GET", "/apis", headers=headers)
    if api.get("kind") == "APIGroupDiscoveryList" and apis.get("kind") == "APIGroupDiscoveryList":
        return RESTMapper([*resources_from_aggregated(api), *resources_from_aggregated(apis)])
    return RESTMapper(await _legacy(client, api, apis))
