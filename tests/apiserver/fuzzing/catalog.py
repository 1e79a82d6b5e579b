"""What the API server says it serves, read from its own OpenAPI v2 document.

Every operation of /openapi/v2 becomes an `Operation` (method, path template, the
`x-kubernetes-action`, the kind, the body's schema and the query parameters it takes), grouped
into a `Family` per resource: `deployments`, `deployments/status`, `deployments/scale` and the
`/watch/` forms all belong to the family of apps/v1 deployments, so the fuzzer can pick a
resource first and then one of the verbs served for it. Nothing here is hand-listed: a resource
the server starts serving is fuzzed without a change here.

Connect operations (exec, attach, portforward, proxy) are left out: they hand the connection on
to a kubelet or pod, none of which exists here, where a 502/503 is the right answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Catalog", "Family", "Operation", "load_catalog"]

_SCOPE = re.compile(r"^/(?:api|apis/[^/]+)/[^/]+/(?:watch/)?(?:namespaces/\{namespace\}/)?")


@dataclass(frozen=True)
class Operation:
    """One method on one path template, as the OpenAPI document describes it."""

    method: str
    path: str
    action: str
    group: str
    version: str
    kind: str
    subresource: str
    body_ref: str | None
    query: tuple[tuple[str, str], ...]
    """(name, type) of every query parameter the operation documents."""
    consumes: tuple[str, ...]

    @property
    def on_item(self) -> bool:
        return "{name}" in self.path

    @property
    def namespaced(self) -> bool:
        return "{namespace}" in self.path

    @property
    def label(self) -> str:
        """The verb as the summary counts it: `create`, `patch/status`, `watch`..."""
        verb = {"post": "create", "put": "update", "watchlist": "watch"}.get(self.action, self.action)
        if self.action == "get" and self.subresource == "log":
            verb = "get"
        return f"{verb}/{self.subresource}" if self.subresource else verb


@dataclass
class Family:
    """A resource (group, version, plural) with every operation served on it."""

    group: str
    version: str
    plural: str
    kind: str = ""
    namespaced: bool = False
    operations: list[Operation] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.group or 'core'}/{self.version}/{self.plural}"

    def item_path(self, namespace: str | None, name: str, subresource: str = "") -> str:
        base = "/api/v1" if not self.group else f"/apis/{self.group}/{self.version}"
        scope = f"/namespaces/{namespace}" if self.namespaced and namespace is not None else ""
        return f"{base}{scope}/{self.plural}/{control_escaped(name)}" + (f"/{subresource}" if subresource else "")


def control_escaped(name: str) -> str:
    """`name` with control characters percent-encoded: names such as a ClusterRole's may hold
    them (a path segment name only refuses "/", "%", "." and ".."), and no HTTP client sends
    them raw; every other character stays as drawn, so "%2e%2e" still reaches the server."""
    return "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)


@dataclass
class Catalog:
    families: dict[str, Family]
    definitions: dict[str, Any]

    def kinds(self) -> set[str]:
        return {f.kind for f in self.families.values() if f.kind}


def _resolve_param(doc: dict[str, Any], param: dict[str, Any]) -> dict[str, Any]:
    ref = param.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/parameters/"):
        resolved: dict[str, Any] = doc["parameters"][ref.removeprefix("#/parameters/")]
        return resolved
    return param


def _operation(doc: dict[str, Any], path: str, method: str, op: dict[str, Any],
               shared: list[dict[str, Any]]) -> Operation | None:
    action = op.get("x-kubernetes-action")
    gvk = op.get("x-kubernetes-group-version-kind")
    if not isinstance(action, str) or action == "connect" or not isinstance(gvk, dict):
        return None
    params = [_resolve_param(doc, p) for p in (*shared, *op.get("parameters", []))]
    body_ref = next((p["schema"].get("$ref", "") for p in params if p.get("in") == "body"), None)
    rest = _SCOPE.sub("", path).split("/")
    subresource = "/".join(part for part in rest[1:] if part != "{name}")
    return Operation(method=method.upper(), path=path, action=action, group=gvk.get("group", ""),
                     version=gvk.get("version", ""), kind=gvk.get("kind", ""), subresource=subresource,
                     body_ref=body_ref.removeprefix("#/definitions/") if body_ref else None,
                     query=tuple((p["name"], p.get("type", "string")) for p in params if p.get("in") == "query"),
                     consumes=tuple(op.get("consumes", ())))


def _family_of(path: str) -> tuple[str, str, str] | None:
    m = re.match(r"^/(?:api/(v1)|apis/([^/]+)/([^/]+))/", path)
    if m is None:
        return None
    group, version = ("", "v1") if m.group(1) else (m.group(2), m.group(3))
    rest = _SCOPE.sub("", path).split("/")
    if not rest or not rest[0] or rest[0].startswith("{"):
        return None
    return group, version, rest[0]


def load_catalog(doc: dict[str, Any]) -> Catalog:
    """Group every non-connect operation of an OpenAPI v2 document by the resource it serves."""
    families: dict[str, Family] = {}
    for path, item in doc["paths"].items():
        where = _family_of(path)
        if where is None:
            continue
        shared = [_resolve_param(doc, p) for p in item.get("parameters", [])]
        for method, op in item.items():
            if method == "parameters":
                continue
            operation = _operation(doc, path, method, op, shared)
            if operation is None:
                continue
            family = families.setdefault("/".join(where), Family(*where))
            family.operations.append(operation)
            if not operation.subresource:
                family.kind = family.kind or operation.kind
            family.namespaced = family.namespaced or operation.namespaced
    return Catalog(families={f.key: f for f in families.values() if f.operations}, definitions=doc["definitions"])
