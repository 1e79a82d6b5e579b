"""Which resource and subresource an OpenAPI path belongs to.

Upstream's documents list paths such as `/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale`
and the deprecated `/api/v1/watch/...`; the server picks those of the resources it serves by
this key, and `hack/derive_schema.py` groups the derived paths by it.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["PathKey", "path_key"]


class PathKey(NamedTuple):
    """`resource` is `group/version/plural` (`/v1/pods` for the core group); `subresource` may be empty."""

    resource: str
    subresource: str


def path_key(path: str) -> PathKey | None:
    """The resource and subresource of an API path, or None for a path outside /api and /apis."""
    parts = path.strip("/").split("/")
    if parts[0] == "api" and len(parts) > 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) > 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if rest[0] == "watch":
        rest = rest[1:]
    if len(rest) > 2 and rest[:2] == ["namespaces", "{namespace}"]:
        rest = rest[2:]
    if not rest:
        return None
    return PathKey(f"{group}/{version}/{rest[0]}", rest[2] if len(rest) > 2 else "")
