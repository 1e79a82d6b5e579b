"""The /openapi/v2 and /openapi/v3 documents for the kinds picokube serves.

kubectl's default `--validate=strict` needs an OpenAPI v3 document that advertises the
`fieldValidation` query parameter (then it lets the server validate) and `kubectl explain`
reads field schemas from the same documents. The schemas come from `schemas.json`; the
documents are built from the resource registry's resources, cached per set of resources
(so a resource added later changes them), with a content hash, as kubectl keys its cache by
`?hash=`.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from apiserver.openapi.schema import definition_for_gvk, definitions
from kube.resources import ResourceInfo

__all__ = ["openapi_v2", "openapi_v3_index", "openapi_v3_group"]

_INFO = {"title": "Kubernetes", "version": "v1.30.0"}


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _operations(info: ResourceInfo, ref_root: str, v3: bool) -> dict[str, Any]:
    name = definition_for_gvk(info.group, info.version, info.kind)
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    ref = {"$ref": f"{ref_root}{name}"} if name else {"type": "object"}
    response = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}} if v3 else \
        {"200": {"description": "OK", "schema": ref}}

    def param(pname: str) -> dict[str, Any]:
        return {"name": pname, "in": "query", "schema": {"type": "string"}} if v3 else \
            {"name": pname, "in": "query", "type": "string", "uniqueItems": True}

    write_params = [param("dryRun"), param("fieldManager"), param("fieldValidation")]
    op = {"x-kubernetes-group-version-kind": gvk, "responses": response}
    base = "/" + _gv_path(info.group, info.version) + ("/namespaces/{namespace}" if info.namespaced else "")
    item = f"{base}/{info.plural}/{{name}}"
    return {
        f"{base}/{info.plural}": {"get": {**op, "operationId": f"list{info.kind}", "x-kubernetes-action": "list"},
                                  "post": {**op, "operationId": f"create{info.kind}", "parameters": write_params,
                                           "x-kubernetes-action": "post"}},
        item: {"get": {**op, "operationId": f"read{info.kind}", "x-kubernetes-action": "get"},
               "put": {**op, "operationId": f"replace{info.kind}", "parameters": write_params,
                       "x-kubernetes-action": "put"},
               "patch": {**op, "operationId": f"patch{info.kind}", "parameters": [*write_params, param("force")],
                         "x-kubernetes-action": "patch"},
               "delete": {**op, "operationId": f"delete{info.kind}", "x-kubernetes-action": "delete"}},
    }


def _rewrite_refs(node: Any, root: str) -> Any:
    if isinstance(node, dict):
        return {k: (root + v.rsplit("/", 1)[-1] if k == "$ref" and isinstance(v, str) else _rewrite_refs(v, root))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(v, root) for v in node]
    return node


@lru_cache(maxsize=1)
def openapi_v2(infos: tuple[ResourceInfo, ...]) -> bytes:
    """The v2 document for the resources `infos` (the registry's, at the time of asking)."""
    paths: dict[str, Any] = {}
    for info in infos:
        paths.update(_operations(info, "#/definitions/", v3=False))
    doc = {"swagger": "2.0", "info": _INFO, "paths": paths, "definitions": definitions()}
    return json.dumps(doc, separators=(",", ":")).encode()


@lru_cache(maxsize=64)
def openapi_v3_group(infos: tuple[ResourceInfo, ...], path: str) -> bytes | None:
    """The v3 document for one group-version path (`api/v1`, `apis/apps/v1`), or None."""
    served = [r for r in infos if _gv_path(r.group, r.version) == path]
    if not served:
        return None
    paths: dict[str, Any] = {}
    for info in served:
        paths.update(_operations(info, "#/components/schemas/", v3=True))
    schemas = _rewrite_refs(definitions(), "#/components/schemas/")
    doc = {"openapi": "3.0.0", "info": _INFO, "paths": paths, "components": {"schemas": schemas}}
    return json.dumps(doc, separators=(",", ":")).encode()


@lru_cache(maxsize=1)
def openapi_v3_index(infos: tuple[ResourceInfo, ...]) -> dict[str, Any]:
    out = {}
    for path in sorted({_gv_path(r.group, r.version) for r in infos}):
        body = openapi_v3_group(infos, path)
        assert body is not None
        digest = hashlib.sha512(body).hexdigest()[:32].upper()
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": out}
