"""The /openapi/v2 and /openapi/v3 documents for the resources picokube serves.

kubectl's default `--validate=strict` reads these (v3 from 1.29, the v2 protobuf before): an
operation that advertises the `fieldValidation` query parameter lets the server validate.
`kubectl explain` shows the descriptions and field types of the same documents.

For a resource upstream Kubernetes defines, the path items are upstream's own (from
`schemas.json`), limited to the subresources served here; a resource registered at run time
that upstream does not know gets list/create/get/replace/patch/delete operations built in
the same shape. Each document is built once per set of resources (so a resource added later
changes it), per server version and per generation of the custom resources' definitions
(`generation`, which callers take from `custom_generation()`); the v3 index carries a content hash, as kubectl keys its
cache by `?hash=`.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from apiserver.openapi.paths import path_key
from apiserver.openapi.protobuf_v2 import document_to_protobuf
from apiserver.openapi.schema import (
    all_definitions,
    any_definition_for_gvk,
    shared_parameters,
    upstream_paths,
)
from apiserver.openapi.v3 import path_item_v3, schema_v3
from kube.resources import ResourceInfo

__all__ = ["openapi_v2", "openapi_v2_document", "openapi_v2_protobuf", "openapi_v3_group", "openapi_v3_index"]

Infos = tuple[ResourceInfo, ...]


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _info(version: str) -> dict[str, str]:
    return {"title": "Kubernetes", "version": version}


def _synthesized(info: ResourceInfo) -> dict[str, Any]:
    """Path items for a resource upstream does not define, shaped like kube-openapi's."""
    name = any_definition_for_gvk(info.group, info.version, info.kind)
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    ref = {"$ref": f"#/definitions/{name}"} if name else {"type": "object"}

    def param(pname: str) -> dict[str, Any]:
        return {"name": pname, "in": "query", "type": "string", "uniqueItems": True}

    write = [param("dryRun"), param("fieldManager"), param("fieldValidation")]
    op = {"x-kubernetes-group-version-kind": gvk, "responses": {"200": {"description": "OK", "schema": ref}},
          "consumes": ["*/*"], "produces": ["application/json", "application/yaml"]}
    base = "/" + _gv_path(info.group, info.version) + ("/namespaces/{namespace}" if info.namespaced else "")
    patch_types = ["application/json-patch+json", "application/merge-patch+json",
                   "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
    return {
        f"{base}/{info.plural}": {
            "get": {**op, "operationId": f"list{info.kind}", "x-kubernetes-action": "list"},
            "post": {**op, "operationId": f"create{info.kind}", "parameters": write, "x-kubernetes-action": "post"}},
        f"{base}/{info.plural}/{{name}}": {
            "get": {**op, "operationId": f"read{info.kind}", "x-kubernetes-action": "get"},
            "put": {**op, "operationId": f"replace{info.kind}", "parameters": write, "x-kubernetes-action": "put"},
            "patch": {**op, "operationId": f"patch{info.kind}", "parameters": [*write, param("force")],
                      "consumes": patch_types, "x-kubernetes-action": "patch"},
            "delete": {**op, "operationId": f"delete{info.kind}", "x-kubernetes-action": "delete"}},
    }


def _paths(info: ResourceInfo) -> dict[str, Any]:
    """The v2 path items of one served resource and its served subresources."""
    upstream = upstream_paths().get(f"{info.group}/{info.version}/{info.plural}")
    if not upstream:
        return _synthesized(info)
    served = {"", *info.subresources}
    return {path: item for path, item in upstream.items() if (key := path_key(path)) and key.subresource in served}


def _referenced(root: Any) -> dict[str, Any]:
    """The definitions `root` references, transitively, by name."""
    defs, found, todo = all_definitions(), {}, [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/definitions/"):
                name = ref.rsplit("/", 1)[-1]
                if name not in found and name in defs:
                    found[name] = defs[name]
                    todo.append(defs[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return dict(sorted(found.items()))


@lru_cache(maxsize=4)
def openapi_v2_document(infos: Infos, version: str, generation: int = 0) -> dict[str, Any]:
    """The v2 (Swagger 2.0) document for the resources `infos`, as a JSON value; do not mutate."""
    paths: dict[str, Any] = {}
    for info in infos:
        paths.update(_paths(info))
    return {"swagger": "2.0", "info": _info(version), "paths": dict(sorted(paths.items())),
            "definitions": dict(sorted(all_definitions().items())), "parameters": shared_parameters(),
            "security": [{"BearerToken": []}],
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "in": "header",
                                                    "name": "authorization", "type": "apiKey"}}}


@lru_cache(maxsize=4)
def openapi_v2(infos: Infos, version: str, generation: int = 0) -> bytes:
    """The v2 document as JSON bytes."""
    return json.dumps(openapi_v2_document(infos, version, generation), separators=(",", ":")).encode()


@lru_cache(maxsize=4)
def openapi_v2_protobuf(infos: Infos, version: str, generation: int = 0) -> bytes:
    """The v2 document as a serialized gnostic `openapi.v2.Document`."""
    return document_to_protobuf(openapi_v2_document(infos, version, generation))


@lru_cache(maxsize=64)
def openapi_v3_group(infos: Infos, path: str, version: str, generation: int = 0) -> bytes | None:
    """The v3 document for one group-version path (`api/v1`, `apis/apps/v1`), or None."""
    served = [r for r in infos if _gv_path(r.group, r.version) == path]
    if not served:
        return None
    v2_paths: dict[str, Any] = {}
    for info in served:
        v2_paths.update(_paths(info))
    params = shared_parameters()
    paths = {p: path_item_v3(item, params) for p, item in sorted(v2_paths.items())}
    used = {p["$ref"].rsplit("/", 1)[-1] for item in v2_paths.values() for op in item.values()
            for p in (op if isinstance(op, list) else op.get("parameters") or []) if "$ref" in p}
    schemas = _referenced([v2_paths, [params[name] for name in sorted(used)]])
    doc = {"openapi": "3.0.0", "info": _info(version), "paths": paths,
           "components": {"schemas": schema_v3(schemas),
                          "securitySchemes": {"BearerToken": {"type": "apiKey", "description":
                                                              "Bearer Token authentication",
                                                              "name": "authorization", "in": "header"}}}}
    return json.dumps(doc, separators=(",", ":")).encode()


@lru_cache(maxsize=4)
def openapi_v3_index(infos: Infos, version: str, generation: int = 0) -> dict[str, Any]:
    """`{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}, ...}}`."""
    out = {}
    for path in sorted({_gv_path(r.group, r.version) for r in infos}):
        body = openapi_v3_group(infos, path, version, generation)
        assert body is not None
        digest = hashlib.sha512(body).hexdigest()[:128].upper()
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": out}
