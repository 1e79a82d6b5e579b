"""Parsing Kubernetes REST paths into (resource, namespace, name, subresource).

    /api/v1/pods                                  all namespaces (or cluster-scoped kinds)
    /api/v1/namespaces/{ns}/pods[/{name}[/{sub}]] namespaced
    /api/v1/nodes/{name}[/{sub}]                  cluster-scoped
    /apis/{group}/{version}/...                   the same under a named group
"""

from __future__ import annotations

from dataclasses import dataclass

from kube.errors import NotFound
from kube.resources import ResourceInfo, resource_for_plural

__all__ = ["ResourcePath", "parse_resource_path"]


@dataclass(frozen=True)
class ResourcePath:
    info: ResourceInfo
    namespace: str | None
    name: str | None
    subresource: str | None


def _not_found() -> NotFound:
    return NotFound("the server could not find the requested resource", details={})


def parse_resource_path(group: str, version: str, parts: list[str]) -> ResourcePath:
    """Resolve the segments after `/api/v1` or `/apis/<group>/<version>`; raise NotFound."""
    if not parts:
        raise _not_found()
    namespace: str | None = None
    if parts[0] == "namespaces" and len(parts) >= 3 and parts[2] not in ("status", "finalize"):
        namespace, parts = parts[1], parts[2:]
    info = resource_for_plural(group, parts[0])
    if info is None or info.version != version:
        raise _not_found()
    if namespace is not None and not info.namespaced:
        raise _not_found()
    name = parts[1] if len(parts) > 1 else None
    sub = parts[2] if len(parts) > 2 else None
    if len(parts) > 3 or (sub is not None and sub not in info.subresources):
        raise _not_found()
    return ResourcePath(info, namespace, name, sub)
