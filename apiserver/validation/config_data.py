"""Secrets and ConfigMaps: merging `stringData`, and validating keys, size, type and immutability.

Mirrors pkg/registry/core/secret (stringData is write-only: its entries are written into
`data`, base64-encoded, overriding keys of the same name, and the field is never stored)
and ValidateSecret / ValidateConfigMap in pkg/apis/core/validation: keys must be valid config
keys, the values together stay within 1 MiB, a typed Secret carries the keys its type
needs, a ConfigMap key is not in both `data` and `binaryData`, and once `immutable` is set
neither the data nor the flag may change, nor may a Secret's type.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from apiserver.validation.field import forbidden, invalid, required, too_long
from kube.errors import FieldError

__all__ = [
    "MAX_DATA_BYTES",
    "merge_string_data",
    "validate_config_map",
    "validate_config_map_update",
    "validate_secret",
    "validate_secret_update",
]

Obj = dict[str, Any]
MAX_DATA_BYTES = 1024 * 1024
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def merge_string_data(secret: Obj) -> None:
    """Move `stringData` into `data` (base64), as upstream's conversion does; a no-op without it."""
    string_data = secret.pop("stringData", None)
    if not isinstance(string_data, dict) or not string_data:
        return
    data = secret.get("data")
    if not isinstance(data, dict):
        data = secret["data"] = {}
    for key, value in string_data.items():
        text = value if isinstance(value, str) else ""
        data[key] = base64.b64encode(text.encode()).decode()


def _key_errors(path: str, key: str) -> list[FieldError]:
    problems = []
    if len(key) > 253:
        problems.append("must be no more than 253 characters")
    if not _CONFIG_KEY.match(key):
        problems.append(_CONFIG_KEY_MSG)
    if key == ".":
        problems.append("must not be '.'")
    elif key == "..":
        problems.append("must not be '..'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return [invalid(f"{path}[{key}]", key, p) for p in problems]


def _decoded_size(value: Any) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=False))
    except (binascii.Error, ValueError):
        return len(value)


def _secret_type_errors(secret: Obj, data: Obj) -> list[FieldError]:
    kind = secret.get("type")
    if kind == "kubernetes.io/service-account-token":
        annotations = (secret.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            return [required("metadata.annotations[kubernetes.io/service-account.name]")]
        return []
    if kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
        return []
    keys = _REQUIRED_KEYS.get(str(kind), ())
    if kind == "kubernetes.io/ssh-auth":
        return [required(f"data[{k}]") for k in keys if not data.get(k)]
    return [required(f"data[{k}]") for k in keys if k not in data]


def validate_secret(secret: Obj) -> list[FieldError]:
    """Key syntax, the 1 MiB total, and the keys the Secret's type requires (after stringData merged)."""
    data = secret.get("data") if isinstance(secret.get("data"), dict) else {}
    assert isinstance(data, dict)
    errs: list[FieldError] = []
    for key in data:
        errs += _key_errors("data", str(key))
    if sum(_decoded_size(v) for v in data.values()) > MAX_DATA_BYTES:
        errs.append(too_long("data", MAX_DATA_BYTES))
    return errs + _secret_type_errors(secret, data)


def _immutable_errors(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[FieldError]:
    if old.get("immutable") is not True:
        return []
    errs = []
    if new.get("immutable") is not True:
        errs.append(forbidden("immutable", "field is immutable when `immutable` is set"))
    for field in fields:
        if (new.get(field) or {}) != (old.get(field) or {}):
            errs.append(forbidden(field, "field is immutable when `immutable` is set"))
    return errs


def validate_secret_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_secret(new)
    if new.get("type") != old.get("type"):
        errs.append(invalid("type", new.get("type"), "field is immutable"))
    return errs + _immutable_errors(new, old, ("data",))


def validate_config_map(cm: Obj) -> list[FieldError]:
    """Key syntax in data and binaryData, no key in both, and the 1 MiB total."""
    data = cm.get("data") if isinstance(cm.get("data"), dict) else {}
    binary = cm.get("binaryData") if isinstance(cm.get("binaryData"), dict) else {}
    assert isinstance(data, dict) and isinstance(binary, dict)
    errs: list[FieldError] = []
    for key in data:
        errs += _key_errors("data", str(key))
        if key in binary:
            errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
    for key in binary:
        errs += _key_errors("binaryData", str(key))
        if key in data:
            errs.append(invalid(f"binaryData[{key}]", key, "duplicate of key present in data"))
    size = sum(len(v.encode()) for v in data.values() if isinstance(v, str))
    size += sum(_decoded_size(v) for v in binary.values())
    if size > MAX_DATA_BYTES:
        errs.append(too_long("", MAX_DATA_BYTES))
    return errs


def validate_config_map_update(new: Obj, old: Obj) -> list[FieldError]:
    return validate_config_map(new) + _immutable_errors(new, old, ("data", "binaryData"))
