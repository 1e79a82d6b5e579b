"""The served kinds' schemas (derived from the Kubernetes OpenAPI document) and what they answer.

`schemas.json` beside this file is produced by `hack/derive_schema.py` from upstream's OpenAPI
document (definitions with their descriptions, and the served resources' path items). From it
we answer:
- which definition describes a group-version-kind;
- the unknown fields of an object (for `fieldValidation=Strict|Warn|Ignore`), and the object
  with them pruned, as Kubernetes' typed decoding prunes them;
- per field, the strategic-merge-patch strategy and merge key, and the list type for
  server-side apply (`SchemaNode`).
Loaded once per process; read-only afterwards, so safe to share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from apiserver.validation.encoding import base64_error
from apiserver.validation.go_time import rfc3339_error

__all__ = ["definitions", "definition_for_gvk", "definition_name", "SchemaNode", "node_for_gvk",
           "prune_unknown_fields", "upstream_paths", "shared_parameters", "register_custom", "unregister_custom",
           "custom_schema", "custom_generation", "all_definitions", "any_definition_for_gvk"]

_PATH = Path(__file__).with_name("schemas.json")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return dict(json.loads(_PATH.read_text(encoding="utf-8")))


def definitions() -> dict[str, dict[str, Any]]:
    """Upstream's definitions by name (`io.k8s.api.core.v1.Pod`); callers must not mutate them."""
    value: dict[str, dict[str, Any]] = _data()["definitions"]
    return value


def upstream_paths() -> dict[str, dict[str, Any]]:
    """Upstream's path items per resource key (`apps/v1/deployments`, see `paths.path_key`)."""
    value: dict[str, dict[str, Any]] = _data()["paths"]
    return value


def shared_parameters() -> dict[str, dict[str, Any]]:
    """The `#/parameters/...` the upstream path items reference."""
    value: dict[str, dict[str, Any]] = _data()["parameters"]
    return value


@cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    index = {}
    for name, d in definitions().items():
        for gvk in d.get("x-kubernetes-group-version-kind") or []:
            index[(gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))] = name
    return index


def definition_for_gvk(group: str, version: str, kind: str) -> str | None:
    """The built-in definition of a kind (custom resources have none here: see `any_definition_for_gvk`)."""
    return _gvk_index().get((group, version, kind))


# Custom resources' definitions, registered and removed while the server runs (the CRD
# controller does both on the event loop). `_custom_generation` changes with every change, so
# documents built from the definitions can be cached per generation.
_custom: dict[str, dict[str, Any]] = {}
_custom_gvk: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
_custom_generation = [0]


def register_custom(gvk: tuple[str, str, str], definitions_by_name: dict[str, dict[str, Any]], *, name: str,
                    structural: dict[str, Any]) -> None:
    """Serve the OpenAPI definitions of one custom kind (`name` is the kind's own); replaces earlier ones."""
    unregister_custom(gvk)
    _custom.update(definitions_by_name)
    _custom_gvk[gvk] = (name, structural)
    _custom_generation[0] += 1


def unregister_custom(gvk: tuple[str, str, str]) -> None:
    entry = _custom_gvk.pop(gvk, None)
    if entry is None:
        return
    _custom.pop(entry[0], None)
    _custom.pop(entry[0] + "List", None)
    _custom_generation[0] += 1


def custom_schema(group: str, version: str, kind: str) -> dict[str, Any] | None:
    """The structural schema (`openAPIV3Schema`) of a served custom kind, None for any other kind."""
    entry = _custom_gvk.get((group, version, kind))
    return entry[1] if entry else None


def custom_generation() -> int:
    return _custom_generation[0]


def all_definitions() -> dict[str, dict[str, Any]]:
    """Built-in and custom definitions by name."""
    return {**definitions(), **_custom} if _custom else definitions()


def any_definition_for_gvk(group: str, version: str, kind: str) -> str | None:
    entry = _custom_gvk.get((group, version, kind))
    return entry[0] if entry else definition_for_gvk(group, version, kind)


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    if str(schema.get("$ref", "")).endswith(".Quantity"):
        return {"type": "string", "_quantity": True}  # a string that also decodes from a JSON number
    seen = 0
    while "$ref" in schema and seen < 10:
        schema = definitions().get(schema["$ref"].rsplit("/", 1)[-1], {})
        seen += 1
    return schema


@dataclass(frozen=True)
class SchemaNode:
    """One position in a schema; None-safe navigation (an unknown position has an empty schema)."""

    schema: dict[str, Any]

    @property
    def known(self) -> bool:
        return bool(self.schema)

    @property
    def type(self) -> str | None:
        t = self.schema.get("type")
        return str(t) if t else ("object" if "properties" in self.schema else None)

    def field(self, name: str) -> SchemaNode:
        props = self.schema.get("properties") or {}
        if name in props:
            return SchemaNode(_resolve(props[name]))
        extra = self.schema.get("additionalProperties")
        if isinstance(extra, dict):
            return SchemaNode(_resolve(extra))
        return SchemaNode({})

    def raw_field(self, name: str) -> dict[str, Any]:
        return dict((self.schema.get("properties") or {}).get(name) or {})

    def items(self) -> SchemaNode:
        items = self.schema.get("items")
        return SchemaNode(_resolve(items)) if isinstance(items, dict) else SchemaNode({})

    def patch_strategy(self, name: str) -> tuple[str, str | None]:
        """(strategy, merge key) of a field: strategy "merge" or "replace"; "retainKeys" may be included."""
        raw = self.raw_field(name)
        return str(raw.get("x-kubernetes-patch-strategy") or "replace"), raw.get("x-kubernetes-patch-merge-key")

    def list_type(self, name: str) -> tuple[str, list[str]]:
        raw = self.raw_field(name)
        return str(raw.get("x-kubernetes-list-type") or "atomic"), list(raw.get("x-kubernetes-list-map-keys") or [])

    def open_ended(self) -> bool:
        """True where any key is allowed (maps like labels, or preserve-unknown-fields)."""
        return ("additionalProperties" in self.schema or bool(self.schema.get("x-kubernetes-preserve-unknown-fields"))
                or (not self.schema.get("properties") and self.type == "object"))


def node_for_gvk(group: str, version: str, kind: str) -> SchemaNode | None:
    entry = _custom_gvk.get((group, version, kind))
    if entry is not None:
        return SchemaNode(_custom[entry[0]])
    name = definition_for_gvk(group, version, kind)
    return SchemaNode(definitions()[name]) if name else None


def prune_unknown_fields(obj: Any, node: SchemaNode, path: str = "") -> list[str]:
    """Remove fields the schema does not declare, in place; return their paths (`spec.foo`).

    A declared field sent as null is removed too (not reported): Go decodes it to the zero
    value, which kube-apiserver then leaves out, so `"labels": null` is stored and answered
    as no labels, never as a null a client has to expect.
    """
    unknown: list[str] = []
    if not node.known:
        return unknown
    if isinstance(obj, dict) and node.type == "object" and not node.open_ended():
        props = node.schema.get("properties") or {}
        for key in list(obj):
            child_path = f"{path}.{key}" if path else key
            if key not in props:
                unknown.append(child_path)
                del obj[key]
            elif obj[key] is None:
                del obj[key]
            else:
                unknown += prune_unknown_fields(obj[key], node.field(key), child_path)
    elif isinstance(obj, dict) and isinstance(node.schema.get("additionalProperties"), dict):
        for key, value in obj.items():
            unknown += prune_unknown_fields(value, node.field(key), f"{path}.{key}" if path else key)
    elif isinstance(obj, list) and node.type == "array":
        item = node.items()
        for i, value in enumerate(obj):
            if value is None and item.known and item.type == "object":
                # Go decodes a null list item into the zero struct, which validation then
                # judges (`subjects: [null]` is a subject without a kind: 422, never stored).
                obj[i] = value = {}
            unknown += prune_unknown_fields(value, item, f"{path}[{i}]")
    return unknown


_JSON_NAMES = {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}


def type_errors(obj: Any, node: SchemaNode, path: str = "") -> list[str]:
    """Where `obj` has a JSON type its schema position cannot decode, in Go's json wording.

    null is always accepted (it decodes to the zero value); quantities and int-or-string
    fields take strings and numbers; an integer field takes only whole numbers that fit its
    Go type (int32 or int64, as Go's decoder refuses an overflow); a `byte` string must be
    standard base64.
    """
    if obj is None or not node.known:
        return []
    t, fmt = node.type, node.schema.get("format")
    bad: str | None = None
    if fmt in ("int-or-string",) or node.schema.get("x-kubernetes-int-or-string"):
        bad = None if isinstance(obj, (int, str)) and not isinstance(obj, bool) else "string"
    elif t == "string":
        bad = None if isinstance(obj, str) or _is_quantity_number(obj, node) else "string"
        if bad is None and fmt == "byte" and isinstance(obj, str) and (problem := base64_error(obj)):
            return [problem]  # a []byte field: Go decodes it as base64 and fails the whole body
        if bad is None and fmt == "date-time" and isinstance(obj, str) and (problem := rfc3339_error(obj)):
            return [problem]  # a metav1.Time: Go's time.Parse fails the whole body
    elif t == "integer":
        ok = (isinstance(obj, int) and not isinstance(obj, bool)) or (isinstance(obj, float) and obj.is_integer())
        bad = None if ok else ("int64" if fmt == "int64" else "int32" if fmt == "int32" else "int")
        if bad is None and not _fits(int(obj), fmt):
            return [f"json: cannot unmarshal number {int(obj)} into Go struct field {path} of type {fmt or 'int64'}"]
    elif t == "number":
        bad = None if isinstance(obj, (int, float)) and not isinstance(obj, bool) else "float64"
    elif t == "boolean":
        bad = None if isinstance(obj, bool) else "bool"
    elif t == "array":
        if not isinstance(obj, list):
            bad = "array"
        else:
            item = node.items()
            return [e for i, v in enumerate(obj) for e in type_errors(v, item, f"{path}[{i}]")]
    elif t == "object":
        if not isinstance(obj, dict):
            bad = "object"
        else:
            return [e for k, v in obj.items() for e in type_errors(v, node.field(str(k)), f"{path}.{k}" if path else k)]
    if bad is None:
        return []
    return [f"json: cannot unmarshal {_JSON_NAMES.get(type(obj), 'value')} into Go struct field {path} of type {bad}"]


_INT_BITS = {"int32": 32, "int64": 64}


def _fits(value: int, fmt: Any) -> bool:
    """Whether an integer fits the Go type behind `format` (int32, else int64)."""
    bits = _INT_BITS.get(str(fmt), 64)
    return -(1 << (bits - 1)) <= value < (1 << (bits - 1))


def definition_name(node: SchemaNode) -> str | None:
    """The definition a node was resolved from (`io.k8s.api.core.v1.Toleration`), None for inline schemas."""
    return _definition_ids().get(id(node.schema))


@lru_cache(maxsize=1)
def _definition_ids() -> dict[int, str]:
    return {id(schema): name for name, schema in definitions().items()}


def _is_quantity_number(obj: Any, node: SchemaNode) -> bool:
    # resource.Quantity is a string in the schema but decodes JSON numbers too.
    return isinstance(obj, (int, float)) and not isinstance(obj, bool) and node.schema.get("_quantity", False)


def canonical_quantity(value: int | float) -> str:
    """A JSON number at a Quantity position as the string the API returns (3 -> "3", 0.5 -> "500m")."""
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    milli = value * 1000
    if abs(milli - round(milli)) < 1e-9:
        return f"{round(milli)}m"
    return repr(value)


def normalize_quantities(obj: Any, node: SchemaNode) -> None:
    """Turn JSON numbers at Quantity positions into strings, in place, so every reader sees strings.

    Kubernetes decodes `cpu: 3` into a Quantity and always encodes it back as "3"; storing the
    number would hand clients an int where the schema promises a string.
    """
    if not node.known:
        return
    if isinstance(obj, dict):
        if node.type == "object" and node.schema.get("properties"):
            props = node.schema["properties"]
            for key, value in obj.items():
                if key in props:
                    _normalize_child(obj, key, value, node.field(key))
        elif isinstance(node.schema.get("additionalProperties"), dict):
            for key, value in obj.items():
                _normalize_child(obj, key, value, node.field(key))
    elif isinstance(obj, list) and node.type == "array":
        item = node.items()
        for i, value in enumerate(obj):
            _normalize_child(obj, i, value, item)


def _normalize_child(parent: Any, key: Any, value: Any, node: SchemaNode) -> None:
    if _is_quantity_number(value, node):
        parent[key] = canonical_quantity(value)
    elif isinstance(value, (dict, list)):
        normalize_quantities(value, node)
