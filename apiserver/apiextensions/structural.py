"""A custom resource's structural schema: validation, defaulting and pruning of its objects.

Mirrors apiextensions-apiserver's `pkg/apiserver/schema` (pruning and defaulting) and the
OpenAPI validation it runs through kube-openapi. The schema is the version's
`openAPIV3Schema`, a JSON value; every function here is pure and safe to call concurrently.
- `validate` returns every violation at once, worded as upstream words them
  (`spec.replicas in body must be of type integer: "three"`), so one 422 carries them all;
- `default` fills in `default` values where a field is absent (objects are walked also where
  the default itself was just filled in, as upstream does);
- `prune` drops fields the schema does not declare, except under
  `x-kubernetes-preserve-unknown-fields`, and keeps `apiVersion`, `kind` and `metadata` of
  an `x-kubernetes-embedded-resource`.
`metadata` and `apiVersion`/`kind` at the root are the server's: they are not validated here.
"""

from __future__ import annotations

import copy
import ipaddress
import re
import uuid
from datetime import datetime
from typing import Any

from apiserver.validation.field import duplicate, invalid, not_supported, required
from kube.errors import FieldError

__all__ = ["validate", "default", "prune", "schema_at"]

Schema = dict[str, Any]
_ROOT_SERVER_FIELDS = ("apiVersion", "kind", "metadata")
_EMBEDDED_FIELDS = ("apiVersion", "kind", "metadata")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_ok(value: Any, wanted: str) -> bool:
    actual = _type_name(value)
    return actual == wanted or (wanted == "number" and actual == "integer")


def _is_date_time(s: str) -> bool:
    try:
        datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in s or "t" in s or " " in s


_FORMATS: dict[str, Any] = {
    "int-or-string": lambda s: True,
    "date-time": _is_date_time,
    "datetime": _is_date_time,
    "date": lambda s: re.fullmatch(r"\d{4}-\d{2}-\d{2}", s) is not None,
    "email": lambda s: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", s) is not None,
    "hostname": lambda s: re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?"
                                       r"(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*", s) is not None,
    "ipv4": lambda s: _ip(s, 4),
    "ipv6": lambda s: _ip(s, 6),
    "uuid": lambda s: _uuid(s),
    "byte": lambda s: re.fullmatch(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", s) is not None,
}


def _ip(s: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(s).version == version
    except ValueError:
        return False


def _uuid(s: str) -> bool:
    try:
        uuid.UUID(s)
    except ValueError:
        return False
    return True


def validate(obj: Any, schema: Schema) -> list[FieldError]:
    """Every violation of `schema` in the custom resource `obj` (root metadata excepted)."""
    errs: list[FieldError] = []
    if isinstance(obj, dict):
        trimmed = {k: v for k, v in obj.items() if k not in _ROOT_SERVER_FIELDS}
        _validate_object(trimmed, schema, "", errs, root=True)
    return errs


def _validate_value(value: Any, schema: Schema, path: str, errs: list[FieldError]) -> None:
    if value is None:
        if not schema.get("nullable") and schema.get("type"):
            errs.append(invalid(path, value, f'{path} in body must be of type {schema["type"]}: "null"'))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (_type_ok(value, "integer") or isinstance(value, str)):
            errs.append(invalid(path, value, f'{path} in body must be of type integer,string: '
                                             f'"{_type_name(value)}"'))
            return
    elif (wanted := schema.get("type")) and not _type_ok(value, str(wanted)):
        errs.append(invalid(path, value, f'{path} in body must be of type {wanted}: "{_type_name(value)}"'))
        return
    _validate_enum(value, schema, path, errs)
    if isinstance(value, dict):
        _validate_object(value, schema, path, errs)
    elif isinstance(value, list):
        _validate_array(value, schema, path, errs)
    elif isinstance(value, str):
        _validate_string(value, schema, path, errs)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(value, schema, path, errs)


def _validate_enum(value: Any, schema: Schema, path: str, errs: list[FieldError]) -> None:
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        errs.append(not_supported(path, value, [e if isinstance(e, str) else str(e) for e in enum]))


def _validate_object(value: Schema, schema: Schema, path: str, errs: list[FieldError], *, root: bool = False) -> None:
    for name in schema.get("required") or []:
        if name not in value and not (root and name in _ROOT_SERVER_FIELDS):
            errs.append(required(_join(path, name)))
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for key, child in value.items():
        if key in props:
            _validate_value(child, props[key], _join(path, key), errs)
        elif isinstance(extra, dict):
            _validate_value(child, extra, _join(path, key), errs)
    n = len(value)
    if isinstance(schema.get("minProperties"), int) and n < schema["minProperties"]:
        errs.append(invalid(path, n, f"{path or 'body'} in body should have at least {schema['minProperties']} "
                                     "properties"))
    if isinstance(schema.get("maxProperties"), int) and n > schema["maxProperties"]:
        errs.append(FieldError(path, f"Too many: {n}: must have at most {schema['maxProperties']} items",
                               reason="FieldValueTooMany"))


def _validate_array(value: list[Any], schema: Schema, path: str, errs: list[FieldError]) -> None:
    n = len(value)
    if isinstance(schema.get("minItems"), int) and n < schema["minItems"]:
        errs.append(invalid(path, n, f"{path} in body should have at least {schema['minItems']} items"))
    if isinstance(schema.get("maxItems"), int) and n > schema["maxItems"]:
        errs.append(FieldError(path, f"Too many: {n}: must have at most {schema['maxItems']} items",
                               reason="FieldValueTooMany"))
    if schema.get("uniqueItems") or schema.get("x-kubernetes-list-type") == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                errs.append(duplicate(f"{path}[{i}]", item))
            seen.append(item)
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") == "map" and keys:
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if isinstance(item, dict):
                key = tuple(item.get(k) for k in keys)
                if key in seen_keys:
                    errs.append(duplicate(f"{path}[{i}]", {k: item.get(k) for k in keys}))
                seen_keys.append(key)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate_value(item, items, f"{path}[{i}]", errs)


def _validate_string(value: str, schema: Schema, path: str, errs: list[FieldError]) -> None:
    if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
        errs.append(invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long"))
    if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
        errs.append(FieldError(path, f"Too long: may not be more than {schema['maxLength']} bytes",
                               reason="FieldValueTooLong"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # the CRD's validation refuses bad patterns; never fail an object on one
        if not matched:
            errs.append(invalid(path, value, f"{path} in body should match '{pattern}'"))
    fmt = schema.get("format")
    check = _FORMATS.get(str(fmt)) if fmt else None
    if check is not None and not check(value):
        errs.append(invalid(path, value, f'{path} in body must be of type {fmt}: "{value}"'))


def _validate_number(value: float, schema: Schema, path: str, errs: list[FieldError]) -> None:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if isinstance(lo, (int, float)):
        if schema.get("exclusiveMinimum") and value <= lo:
            errs.append(invalid(path, value, f"{path} in body should be greater than {_num(lo)}"))
        elif value < lo:
            errs.append(invalid(path, value, f"{path} in body should be greater than or equal to {_num(lo)}"))
    if isinstance(hi, (int, float)):
        if schema.get("exclusiveMaximum") and value >= hi:
            errs.append(invalid(path, value, f"{path} in body should be less than {_num(hi)}"))
        elif value > hi:
            errs.append(invalid(path, value, f"{path} in body should be less than or equal to {_num(hi)}"))
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step and (value / step) != int(value / step):
        errs.append(invalid(path, value, f"{path} in body should be a multiple of {_num(step)}"))


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def default(obj: Any, schema: Schema) -> None:
    """Fill in absent fields that have a `default`, in place (root metadata excepted)."""
    if isinstance(obj, dict):
        _default_object(obj, schema, root=True)


def _default_object(obj: dict[str, Any], schema: Schema, *, root: bool = False) -> None:
    props = schema.get("properties") or {}
    for key, child in props.items():
        if root and key in _ROOT_SERVER_FIELDS:
            continue
        if key not in obj and isinstance(child, dict) and "default" in child:
            obj[key] = copy.deepcopy(child["default"])
        if key in obj:
            _default_value(obj[key], child)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in obj.items():
            if key not in props:
                _default_value(value, extra)


def _default_value(value: Any, schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        _default_object(value, schema)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default_value(item, schema["items"])


def prune(obj: Any, schema: Schema) -> list[str]:
    """Drop undeclared fields in place; the paths dropped (`spec.foo`)."""
    dropped: list[str] = []
    if isinstance(obj, dict):
        _prune_object(obj, schema, "", dropped, keep=_ROOT_SERVER_FIELDS)
    return dropped


def _prune_object(obj: dict[str, Any], schema: Schema, path: str, dropped: list[str], *,
                  keep: tuple[str, ...] = ()) -> None:
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields")) or extra is True
    for key in list(obj):
        if key in keep:
            continue
        child = props.get(key)
        if child is None and isinstance(extra, dict):
            child = extra
        if child is None:
            if not preserve:
                dropped.append(_join(path, key))
                del obj[key]
            continue
        _prune_value(obj[key], child, _join(path, key), dropped)


def _prune_value(value: Any, schema: Any, path: str, dropped: list[str]) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        keep = _EMBEDDED_FIELDS if schema.get("x-kubernetes-embedded-resource") else ()
        _prune_object(value, schema, path, dropped, keep=keep)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune_value(item, schema["items"], f"{path}[{i}]", dropped)


def schema_at(schema: Schema, path: str) -> Schema | None:
    """The schema at a dotted path (`.spec.replicas`), None where the schema does not say."""
    node: Any = schema
    for part in [p for p in path.strip(".").split(".") if p]:
        if not isinstance(node, dict):
            return None
        props = node.get("properties") or {}
        node = props.get(part)
    return node if isinstance(node, dict) else None
