"""The Swagger 2.0 document in gnostic's protobuf form (`openapi.v2.Document`).

kubectl up to 1.28 downloads `/openapi/v2` only as
`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, for validation, `explain`
and to decide whether the server validates fields itself (a patch operation with the kind's
group-version-kind and a `fieldValidation` query parameter); newer kubectls fall back to it
for kinds the v3 documents lack. This renders the same JSON document kube-apiserver would,
field for field, into the messages of `proto/openapiv2.proto`: vendor extensions, enums and
defaults become `Any` values holding their YAML text (JSON, which is YAML), as gnostic does.
Pure functions; the input is not modified.
"""

from __future__ import annotations

import json
from typing import Any

from apiserver.openapi.proto import openapiv2_pb2 as pb

__all__ = ["MEDIA_TYPE", "document_to_protobuf"]

# What clients ask for has an "@" (`...spec.v2@v1.0+protobuf`), which Go's mime parser rejects in a
# Content-Type; the answer carries the dotted spelling, as kube-openapi's handler sends it.
MEDIA_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

_SCALARS = {"$ref": "_ref", "format": "format", "title": "title", "description": "description",
            "maximum": "maximum", "minimum": "minimum", "maxLength": "max_length", "minLength": "min_length",
            "pattern": "pattern", "maxItems": "max_items", "minItems": "min_items", "uniqueItems": "unique_items",
            "readOnly": "read_only"}
_OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch")


def _any(value: Any) -> pb.Any:
    return pb.Any(yaml=json.dumps(value, ensure_ascii=False))


def _extensions(node: dict[str, Any]) -> list[pb.NamedAny]:
    return [pb.NamedAny(name=k, value=_any(v)) for k, v in node.items() if k.startswith("x-")]


def schema(node: dict[str, Any]) -> pb.Schema:
    """One JSON schema as a `Schema` message."""
    out = pb.Schema(**{field: node[key] for key, field in _SCALARS.items() if key in node})
    if "default" in node:
        out.default.CopyFrom(_any(node["default"]))
    if "example" in node:
        out.example.CopyFrom(_any(node["example"]))
    out.required.extend(node.get("required") or [])
    out.enum.extend(_any(v) for v in node.get("enum") or [])
    extra = node.get("additionalProperties")
    if isinstance(extra, bool):
        out.additional_properties.boolean = extra
    elif isinstance(extra, dict):
        out.additional_properties.schema.CopyFrom(schema(extra))
    if "type" in node:
        kinds = node["type"]
        out.type.value.extend(kinds if isinstance(kinds, list) else [kinds])
    items = node.get("items")
    if items is not None:
        out.items.schema.extend(schema(i) for i in (items if isinstance(items, list) else [items]))
    out.all_of.extend(schema(s) for s in node.get("allOf") or [])
    if "properties" in node:
        out.properties.additional_properties.extend(
            pb.NamedSchema(name=k, value=schema(v)) for k, v in node["properties"].items())
    out.vendor_extension.extend(_extensions(node))
    return out


def _parameter(node: dict[str, Any]) -> pb.Parameter:
    common: dict[str, Any] = {k: node[k] for k in ("description", "name", "in", "required") if k in node}
    if node.get("in") == "body":
        return pb.Parameter(body_parameter=pb.BodyParameter(**common, schema=schema(node.get("schema") or {}),
                                                            vendor_extension=_extensions(node)))
    fields: dict[str, Any] = {**common, **{k: node[k] for k in ("type", "format") if k in node},
              "unique_items": bool(node.get("uniqueItems")), "vendor_extension": _extensions(node)}
    if node.get("in") == "path":
        return pb.Parameter(non_body_parameter=pb.NonBodyParameter(
            path_parameter_sub_schema=pb.PathParameterSubSchema(**fields)))
    return pb.Parameter(non_body_parameter=pb.NonBodyParameter(
        query_parameter_sub_schema=pb.QueryParameterSubSchema(**fields)))


def _parameters_item(node: dict[str, Any]) -> pb.ParametersItem:
    if "$ref" in node:
        return pb.ParametersItem(json_reference=pb.JsonReference(_ref=node["$ref"]))
    return pb.ParametersItem(parameter=_parameter(node))


def _operation(node: dict[str, Any]) -> pb.Operation:
    out = pb.Operation(**{k: node[k] for k in ("tags", "summary", "description", "produces", "consumes", "schemes",
                                               "deprecated") if k in node},
                       operation_id=node.get("operationId", ""))
    out.parameters.extend(_parameters_item(p) for p in node.get("parameters") or [])
    for code, response in (node.get("responses") or {}).items():
        value = pb.Response(description=response.get("description", ""))
        if "schema" in response:
            value.schema.schema.CopyFrom(schema(response["schema"]))
        out.responses.response_code.append(pb.NamedResponseValue(name=code, value=pb.ResponseValue(response=value)))
    out.vendor_extension.extend(_extensions(node))
    return out


def _path_item(node: dict[str, Any]) -> pb.PathItem:
    out = pb.PathItem()
    for verb in _OPERATIONS:
        if verb in node:
            getattr(out, verb).CopyFrom(_operation(node[verb]))
    out.parameters.extend(_parameters_item(p) for p in node.get("parameters") or [])
    out.vendor_extension.extend(_extensions(node))
    return out


def document_to_protobuf(doc: dict[str, Any]) -> bytes:
    """The serialized `openapi.v2.Document` of a Swagger 2.0 JSON document."""
    out = pb.Document(swagger=doc.get("swagger", "2.0"),
                      info=pb.Info(title=doc["info"].get("title", ""), version=doc["info"].get("version", "")))
    out.paths.path.extend(pb.NamedPathItem(name=p, value=_path_item(item)) for p, item in doc.get("paths", {}).items())
    out.definitions.additional_properties.extend(
        pb.NamedSchema(name=n, value=schema(s)) for n, s in doc.get("definitions", {}).items())
    out.parameters.additional_properties.extend(
        pb.NamedParameter(name=n, value=_parameter(p)) for n, p in doc.get("parameters", {}).items())
    for requirement in doc.get("security") or []:
        out.security.append(pb.SecurityRequirement(additional_properties=[
            pb.NamedStringArray(name=n, value=pb.StringArray(value=v)) for n, v in requirement.items()]))
    for name, item in (doc.get("securityDefinitions") or {}).items():
        key = pb.ApiKeySecurity(**{k: item[k] for k in ("type", "name", "in", "description") if k in item})
        out.security_definitions.additional_properties.append(
            pb.NamedSecurityDefinitionsItem(name=name, value=pb.SecurityDefinitionsItem(api_key_security=key)))
    serialized: bytes = out.SerializeToString(deterministic=True)
    return serialized
