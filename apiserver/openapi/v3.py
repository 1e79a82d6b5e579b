"""Swagger 2.0 pieces rewritten as OpenAPI 3.0, the way kube-openapi renders `/openapi/v3/<gv>`.

The served data is upstream's v2 document; v3 differs in form only:
- schemas live in `components.schemas`, and a `$ref` that carries siblings (a property's
  description) becomes `allOf: [{$ref}]` beside them, since 3.0 ignores a `$ref`'s siblings;
- a parameter's type moves into `schema`, and the body parameter becomes `requestBody`
  with one entry per media type the operation consumes;
- a response's schema moves under `content`, one entry per media type it produces.
Pure functions over JSON values; inputs are never modified.
"""

from __future__ import annotations

from typing import Any

__all__ = ["path_item_v3", "schema_v3"]

_V2_DEFS = "#/definitions/"
_V3_SCHEMAS = "#/components/schemas/"
_PARAM_SCHEMA_KEYS = ("type", "format", "items", "uniqueItems", "enum", "default")


def schema_v3(node: Any) -> Any:
    """A v2 schema (or any JSON under it) with references and `$ref` siblings in v3 form."""
    if isinstance(node, list):
        return [schema_v3(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: (schema_v3(v) if k != "properties" else {p: schema_v3(s) for p, s in v.items()})
           for k, v in node.items() if k != "$ref"}
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = {"$ref": _V3_SCHEMAS + ref.rsplit("/", 1)[-1]}
        return {"allOf": [target], **out} if out else target
    return out


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: param[k] for k in ("name", "in", "description", "required") if k in param}
    out["schema"] = {k: schema_v3(param[k]) for k in _PARAM_SCHEMA_KEYS if k in param}
    return out


def _operation(op: dict[str, Any], resolve: Any) -> dict[str, Any]:
    out = {k: v for k, v in op.items() if k not in ("consumes", "produces", "parameters", "responses", "schemes")}
    params = [resolve(p) for p in op.get("parameters") or []]
    for body in (p for p in params if p.get("in") == "body"):
        schema = schema_v3(body.get("schema") or {})
        out["requestBody"] = {"content": {mt: {"schema": schema} for mt in op.get("consumes") or ["*/*"]},
                              **({"required": True} if body.get("required") else {})}
    others = [_parameter(p) for p in params if p.get("in") != "body"]
    if others:
        out["parameters"] = others
    produces = op.get("produces") or ["application/json"]
    responses: dict[str, Any] = {}
    for code, response in (op.get("responses") or {}).items():
        entry = {"description": response.get("description", "")}
        if "schema" in response:
            schema = schema_v3(response["schema"])
            entry["content"] = {mt: {"schema": schema} for mt in produces}
        responses[code] = entry
    out["responses"] = responses
    return out


def path_item_v3(item: dict[str, Any], shared_parameters: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One v2 path item in v3 form; `#/parameters/...` references are inlined from `shared_parameters`."""
    def resolve(param: dict[str, Any]) -> dict[str, Any]:
        ref = param.get("$ref")
        return shared_parameters[ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else param

    out: dict[str, Any] = {}
    for key, value in item.items():
        if key == "parameters":
            out[key] = [_parameter(resolve(p)) for p in value]
        else:
            out[key] = _operation(value, resolve)
    return out
