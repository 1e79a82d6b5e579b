"""Kubernetes protobuf messages as the JSON Kubernetes writes for the same Go values.

Protobuf's own JSON mapping is not the API's: Kubernetes encodes int64 as numbers, a Time as
RFC 3339 (null when zero), a Quantity as its string, an IntOrString as an int or a string,
a RawExtension or FieldsV1 as the JSON they carry, and a wrapper such as `ExtraValue` as the
list it wraps; Go's `omitempty` drops a value field's zero unless the field is required, while
a pointer field that is on the wire was set, even to zero; and a Go struct embedded with
`json:",inline"` (a Probe's handler, a Volume's source) is a field of its own in protobuf but
its fields sit in the parent's JSON object. `to_json` applies those rules, so a
protobuf body becomes the same dict the JSON decoder would have produced from the client's
JSON. Pure; messages are not modified.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from typing import Any

from google.protobuf import descriptor, message

from apiserver.openapi.schema import definitions
from apiserver.protobuf.descriptors import is_value_field

__all__ = ["from_json", "to_json"]

FD = descriptor.FieldDescriptor
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."


def _time(msg: Any, micro: bool) -> str | None:
    if not msg.seconds and not msg.nanos:
        return None
    at = datetime.fromtimestamp(msg.seconds, UTC)
    if micro:
        return at.strftime("%Y-%m-%dT%H:%M:%S") + f".{msg.nanos // 1000:06d}Z"
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _raw_json(raw: bytes) -> Any:
    return json.loads(raw) if raw else None


_SPECIAL: dict[str, Callable[[Any], Any]] = {
    _META + "Time": lambda m: _time(m, micro=False),
    _META + "MicroTime": lambda m: _time(m, micro=True),
    _META + "FieldsV1": lambda m: _raw_json(m.Raw),
    "k8s.io.apimachinery.pkg.api.resource.Quantity": lambda m: m.string,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": lambda m: m.strVal if m.type == 1 else m.intVal,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": lambda m: _raw_json(m.raw),
}


@cache
def _required(full_name: str) -> frozenset[str]:
    definition = definitions().get("io.k8s." + full_name.removeprefix("k8s.io."), {})
    return frozenset(definition.get("required") or [])


@cache
def _properties(full_name: str) -> frozenset[str] | None:
    definition = definitions().get("io.k8s." + full_name.removeprefix("k8s.io."))
    return None if definition is None else frozenset(definition.get("properties") or {})


def _is_inline(parent: descriptor.Descriptor, field: descriptor.FieldDescriptor) -> bool:
    """An embedded Go struct: a message field the parent's JSON schema has no property for."""
    if field.message_type is None or field.is_repeated:
        return False
    properties = _properties(parent.full_name)
    return properties is not None and field.json_name not in properties


def _is_list_wrapper(d: descriptor.Descriptor) -> bool:
    """`message ExtraValue { repeated string items = 1; }`: a named Go slice type."""
    return len(d.fields) == 1 and d.fields[0].name == "items" and d.fields[0].is_repeated


def _is_map(field: descriptor.FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _is_zero(value: Any) -> bool:
    return value in ("", 0, False, b"")


def _scalar(field: descriptor.FieldDescriptor, value: Any) -> Any:
    if field.type == FD.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def _value(field: descriptor.FieldDescriptor, value: Any) -> Any:
    if field.type == FD.TYPE_MESSAGE:
        return to_json(value)
    return _scalar(field, value)


def to_json(msg: message.Message) -> Any:
    """The JSON value Kubernetes writes for `msg` (a dict for ordinary messages)."""
    d = msg.DESCRIPTOR
    special = _SPECIAL.get(d.full_name)
    if special is not None:
        return special(msg)
    if _is_list_wrapper(d):
        return [_value(d.fields[0], v) for v in msg.items]
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        if _is_map(field):
            entry_value = field.message_type.fields_by_name["value"]
            out[field.json_name] = {k: _value(entry_value, v) for k, v in value.items()}
        elif field.is_repeated:
            out[field.json_name] = [_value(field, v) for v in value]
        elif field.type == FD.TYPE_MESSAGE and _is_inline(d, field):
            out.update(to_json(value))
        elif field.type == FD.TYPE_MESSAGE:
            out[field.json_name] = to_json(value)
        elif _is_zero(value) and is_value_field(field) and field.name not in _required(d.full_name):
            continue  # a Go value field at its zero: omitempty drops it
        else:
            out[field.json_name] = _scalar(field, value)
    for name in _required(d.full_name) - out.keys():
        field = d.fields_by_camelcase_name.get(name)
        if field is not None and field.is_repeated and not _is_map(field):
            out[name] = []  # a required list is written empty (`items: []`), never left out
    return out


def _parse_time(value: str) -> tuple[int, int]:
    at = datetime.fromisoformat(value)
    return int(at.replace(microsecond=0).timestamp()), at.microsecond * 1000


def _fill_special(msg: Any, full_name: str, value: Any) -> bool:
    """Fill a message the JSON mapping writes specially; False when `full_name` is ordinary."""
    if full_name in (_META + "Time", _META + "MicroTime"):
        msg.seconds, msg.nanos = _parse_time(value)
    elif full_name == _META + "FieldsV1":
        msg.Raw = json.dumps(value, separators=(",", ":")).encode()
    elif full_name == "k8s.io.apimachinery.pkg.runtime.RawExtension":
        msg.raw = json.dumps(value, separators=(",", ":")).encode()
    elif full_name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        msg.string = str(value)
    elif full_name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        if isinstance(value, str):
            msg.type, msg.strVal = 1, value
        else:
            msg.type, msg.intVal = 0, int(value)
    else:
        return False
    return True


def _from_scalar(field: descriptor.FieldDescriptor, value: Any) -> Any:
    if field.type == FD.TYPE_BYTES:
        return base64.b64decode(value)
    if field.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return float(value)
    if field.cpp_type in (FD.CPPTYPE_INT32, FD.CPPTYPE_INT64, FD.CPPTYPE_UINT32, FD.CPPTYPE_UINT64):
        return int(value)
    return value


def from_json(value: Any, msg: message.Message) -> None:
    """Fill `msg` from the JSON Kubernetes writes for it (the inverse of `to_json`); keys the
    message has no field for (apiVersion, kind) are ignored."""
    d = msg.DESCRIPTOR
    if value is None or _fill_special(msg, d.full_name, value):
        return
    if _is_list_wrapper(d):
        value = {"items": value}
    for field in d.fields:
        target = getattr(msg, field.name)
        if _is_inline(d, field):
            from_json(value, target)  # the embedded struct's fields are the parent's
            continue
        item = value.get(field.json_name)
        if item is None:
            if field.message_type is not None and not field.is_repeated and is_value_field(field):
                target.SetInParent()  # Go writes a value struct even when it is zero
            continue
        if _is_map(field):
            entry_value = field.message_type.fields_by_name["value"]
            for k, v in item.items():
                if entry_value.message_type is not None:
                    from_json(v, target[k])
                else:
                    target[k] = _from_scalar(entry_value, v)
        elif field.is_repeated:
            for v in item:
                if field.message_type is not None:
                    from_json(v, target.add())
                else:
                    target.append(_from_scalar(field, v))
        elif field.message_type is not None:
            target.SetInParent()
            from_json(item, target)
        else:
            setattr(msg, field.name, _from_scalar(field, item))
