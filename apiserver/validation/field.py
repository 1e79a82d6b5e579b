"""Field errors worded as apimachinery's field.Error renders them, with Go's value printing.

Kubernetes prints the offending value with Go's fmt: strings quoted (`"Bogus"`), numbers and
booleans bare (`5`, `true`), nil as `null`, and anything else as Go source (`%#v`), so a map
reads `map[string]string{"a":"b"}`. `go_value` reproduces that for JSON values, so messages
match upstream's character for character whatever type the client sent. The constructors
mirror field.Invalid / NotSupported / Required / Duplicate / Forbidden / TooLong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from kube.errors import FieldError

__all__ = ["duplicate", "forbidden", "go_label_selector", "go_quote", "go_value", "invalid", "not_supported",
           "required", "too_long"]


def go_quote(text: str) -> str:
    """Go's %q for a string (JSON escaping is the same for printable text)."""
    return json.dumps(text, ensure_ascii=False)


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        types = {_go_type(v) for v in value.values()}
        return f"map[string]{types.pop() if len(types) == 1 else 'interface {}'}"
    if isinstance(value, list):
        types = {_go_type(v) for v in value}
        return f"[]{types.pop() if len(types) == 1 else 'interface {}'}"
    return "interface {}"


def _go_source(value: Any) -> str:
    """Go's %#v of a decoded JSON value."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        body = ", ".join(f"{go_quote(str(k))}:{_go_source(value[k])}" for k in sorted(value, key=str))
        return f"{_go_type(value)}{{{body}}}"
    if isinstance(value, list):
        return f"{_go_type(value)}{{{', '.join(_go_source(v) for v in value)}}}"
    return go_quote(str(value))


def go_value(value: Any) -> str:
    """How field.Error prints a bad value: %v for numbers and booleans, %q for strings, else %#v."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return _go_source(value)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {go_value(value)}: {detail}" if detail else
                      f"Invalid value: {go_value(value)}")


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    allowed = ", ".join(go_quote(s) for s in supported)
    return FieldError(path, f"Unsupported value: {go_value(value)}: supported values: {allowed}",
                      reason="FieldValueNotSupported")


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, f"Required value: {detail}" if detail else "Required value", reason="FieldValueRequired")


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {go_value(value)}", reason="FieldValueDuplicate")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}", reason="FieldValueForbidden")


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, f"Too long: must have at most {limit} bytes", reason="FieldValueTooLong")


def go_label_selector(selector: Any) -> str:
    """%#v of a metav1.LabelSelector, as upstream prints an immutable selector."""
    if not isinstance(selector, dict):
        return "null"
    labels = selector.get("matchLabels")
    labels_text = _go_source(labels) if isinstance(labels, dict) and labels else "map[string]string(nil)"
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list) and exprs:
        items = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{go_quote(str(e.get('key', '')))}, "
            f"Operator:{go_quote(str(e.get('operator', '')))}, Values:{_string_slice(e.get('values'))}}}"
            for e in exprs if isinstance(e, dict))
        exprs_text = f"[]v1.LabelSelectorRequirement{{{items}}}"
    else:
        exprs_text = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{exprs_text}}}"


def _string_slice(values: Any) -> str:
    if not isinstance(values, list) or not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"
