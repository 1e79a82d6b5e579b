"""Parsing a request once into what it asks for: verb, group, version, namespace, resource,
name, subresource.

Mirrors apiserver's request.RequestInfoFactory. Resource requests look like

    /api/v1/pods                                       list, watch, create, deletecollection
    /api/v1/namespaces/{ns}/pods[/{name}[/{sub}...]]  namespaced
    /api/v1/namespaces/{name}[/status|/finalize]      the namespace itself
    /apis/{group}/{version}/...                        the same under a named group

Everything else (discovery documents, /healthz, /metrics, /openapi/...) is a non-resource
request, authorized by path and lowercase HTTP verb. The parse is purely syntactic: whether
the resource is served is the router's question, so authorization can answer first (an
unauthorized client learns nothing about what exists), as upstream does.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RequestInfo", "parse_request_info", "verb_for"]

_COLLECTION_VERBS = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
_NAMED_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "POST": "create"}
_CREATE_ONLY = frozenset({"exec", "attach", "portforward"})
"""Subresources authorized as `create` whatever the method: a WebSocket client must use GET."""


@dataclass(frozen=True)
class RequestInfo:
    """What one request is about; `parts` holds path segments past the subresource (proxy paths)."""

    is_resource_request: bool
    path: str
    verb: str
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    parts: tuple[str, ...] = ()


def verb_for(method: str, *, named: bool, watch: bool) -> str:
    """The authorization verb of an HTTP method on a named object or a collection."""
    if method == "GET" and watch:
        return "watch"
    table = _NAMED_VERBS if named else _COLLECTION_VERBS
    return table.get(method, method.lower())


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "t", "yes")


def parse_request_info(method: str, path: str, *, watch: str | None = None) -> RequestInfo:
    """The RequestInfo of `method path` (`watch` is the `watch` query parameter)."""
    segments = [s for s in path.split("/") if s]
    plain = RequestInfo(is_resource_request=False, path=path, verb=method.lower())
    if len(segments) < 2 or segments[0] not in ("api", "apis"):
        return plain
    prefix = segments[0]
    if prefix == "api":
        group, version, rest = "", segments[1], segments[2:]
    else:
        if len(segments) < 3:
            return plain
        group, version, rest = segments[1], segments[2], segments[3:]
    if not rest:
        return plain  # a discovery document
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        # /namespaces/{name} and /namespaces/{name}/{status,finalize} address the namespace itself.
        rest = rest[2:] if len(rest) > 2 and rest[2] not in ("status", "finalize") else ["namespaces", *rest[1:]]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    verb = verb_for(method, named=bool(name), watch=_truthy(watch))
    if resource == "pods" and subresource in _CREATE_ONLY and method in ("GET", "POST"):
        verb = "create"
    return RequestInfo(is_resource_request=True, path=path, verb=verb, api_prefix=prefix, api_group=group,
                       api_version=version, namespace=namespace, resource=resource, name=name,
                       subresource=subresource, parts=tuple(rest[3:]))
