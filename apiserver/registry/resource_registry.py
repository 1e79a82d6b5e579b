"""The resource registry: every served resource with its REST storages, open to additions.

Mirrors the API server's installed API groups (genericapiserver's APIGroupInfo and the
discovery it derives). Routing, discovery and the OpenAPI documents all read this one table,
so a resource registered here is served, listed and described at once, including one added
while the server runs (custom resources), and one removed disappears from all three.
Registration and lookups happen on the event loop; no lock is needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from apiserver.registry.generic import RegistryStore
from apiserver.registry.lister import CacheLister
from apiserver.registry.rest.interfaces import Storage
from kube.resources import ResourceInfo
from kube.versions import sort_versions

__all__ = ["ServedResource", "ResourceRegistry"]


@dataclass
class ServedResource:
    """One resource: its facts, the storage of the resource itself, and of each subresource."""

    info: ResourceInfo
    storage: Storage
    subresources: dict[str, Storage] = field(default_factory=dict)
    store: RegistryStore | None = None
    """The generic store behind it, when it is stored (reviews are not)."""
    custom: bool = False
    """Defined by a CustomResourceDefinition (printed by its columns, not a built-in printer)."""
    printer_columns: tuple[dict[str, Any], ...] = ()
    """A custom resource's additionalPrinterColumns (built-in kinds have their own printers)."""

    def storage_for(self, subresource: str) -> Storage | None:
        return self.subresources.get(subresource) if subresource else self.storage


class ResourceRegistry:
    def __init__(self) -> None:
        self._served: dict[tuple[str, str, str], ServedResource] = {}

    def add(self, served: ServedResource) -> None:
        """Serve `served` (replacing one of the same group, version and plural)."""
        info = served.info
        self._served[(info.group, info.version, info.plural)] = served

    def remove(self, group: str, version: str, plural: str) -> None:
        self._served.pop((group, version, plural), None)

    def lookup(self, group: str, version: str, plural: str) -> ServedResource | None:
        return self._served.get((group, version, plural))

    def __iter__(self) -> Iterator[ServedResource]:
        return iter(list(self._served.values()))

    def infos(self) -> list[ResourceInfo]:
        return [s.info for s in self]

    def group_versions(self) -> list[tuple[str, str]]:
        """Named group versions in registration order (the legacy group "" is not among them)."""
        seen: list[tuple[str, str]] = []
        for s in self:
            gv = (s.info.group, s.info.version)
            if s.info.group and gv not in seen:
                seen.append(gv)
        return seen

    def groups(self) -> list[tuple[str, list[str]]]:
        """Named groups in registration order, each with its versions, the preferred one first."""
        versions: dict[str, list[str]] = {}
        for group, version in self.group_versions():
            versions.setdefault(group, []).append(version)
        return [(group, sort_versions(vs)) for group, vs in versions.items()]

    def store(self, plural: str, group: str = "") -> RegistryStore:
        """The generic store of a stored built-in resource; KeyError when there is none."""
        for s in self:
            if s.info.plural == plural and s.info.group == group and s.store is not None:
                return s.store
        raise KeyError(f"{plural}.{group}" if group else plural)

    def lister(self, plural: str, group: str = "") -> CacheLister:
        return self.store(plural, group).lister()
