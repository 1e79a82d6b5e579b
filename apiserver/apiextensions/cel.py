"""`x-kubernetes-validations`: the CEL rules of a CRD schema, compiled and run with cel-python.

Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel` (compilation.go, validation.go):
- `compile_errors` walks a CRD's schema and returns a FieldError for every rule or
  messageExpression that does not compile, every unknown `reason` and every empty rule, so a
  CRD with a broken rule is refused at create or update (`... x-kubernetes-validations[0].rule:
  Invalid value: "...": compilation failed: ...`);
- `validate` walks a custom resource along its schema and, at every node carrying rules,
  evaluates each rule with `self` bound to the node's value. A rule naming `oldSelf` is a
  transition rule: it runs only on update, and only where the old object holds a value at the
  same place (object properties and map values correlate by key; list items do not, as with
  upstream's atomic lists). Every failed rule is one FieldError, so one 422 names them all.
A failure reads as upstream's does: the rule's `message`, else the string its
`messageExpression` yields, else `failed rule: <rule>`; at the node's path, or the node's path
joined with `fieldPath`; with the rule's `reason` (FieldValueInvalid by default).
Compiled programs are cached by their text; every function here is safe to call concurrently.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel

from apiserver.validation.field import go_value, invalid, not_supported, required
from kube.errors import FieldError

__all__ = ["compile_errors", "validate"]

Schema = dict[str, Any]
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_OLD_SELF = re.compile(r"\boldSelf\b")
_ENV = celpy.Environment()


@functools.lru_cache(maxsize=1024)
def _compile(expression: str) -> tuple[Any, str | None]:
    """(program, None), or (None, the compilation error as cel-go words it)."""
    try:
        return _ENV.program(_ENV.compile(expression)), None
    except Exception as e:  # noqa: BLE001 - any parse or check failure is the rule's fault
        line, column = getattr(e, "line", 1), getattr(e, "column", 0)
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"ERROR: <input>:{line}:{column}: Syntax error: {detail}"


def compile_errors(schema: Any, path: str) -> list[FieldError]:
    """Every uncompilable rule, messageExpression and unknown reason in `schema` (at `path`)."""
    errs: list[FieldError] = []
    if not isinstance(schema, dict):
        return errs
    rules = schema.get("x-kubernetes-validations")
    if rules is not None and not isinstance(rules, list):
        errs.append(invalid(f"{path}.x-kubernetes-validations", rules, "must be a list of rules"))
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        errs += _rule_errors(rule, f"{path}.x-kubernetes-validations[{i}]")
    for key, child in (schema.get("properties") or {}).items():
        errs += compile_errors(child, f"{path}.properties[{key}]")
    for key in ("items", "additionalProperties"):
        errs += compile_errors(schema.get(key), f"{path}.{key}")
    return errs


def _rule_errors(rule: Any, path: str) -> list[FieldError]:
    if not isinstance(rule, dict) or not str(rule.get("rule") or "").strip():
        return [required(f"{path}.rule")]
    errs: list[FieldError] = []
    _, error = _compile(str(rule["rule"]))
    if error:
        errs.append(invalid(f"{path}.rule", rule["rule"], f"compilation failed: {error}"))
    if rule.get("messageExpression"):
        _, error = _compile(str(rule["messageExpression"]))
        if error:
            errs.append(invalid(f"{path}.messageExpression", rule["messageExpression"],
                                f"messageExpression compilation failed: {error}"))
    if rule.get("reason") is not None and rule["reason"] not in _REASONS:
        errs.append(not_supported(f"{path}.reason", rule["reason"], _REASONS))
    if "\n" in str(rule.get("message") or ""):
        errs.append(invalid(f"{path}.message", rule["message"], "message must not contain line breaks"))
    return errs


_MISSING = object()


def validate(obj: Any, schema: Schema, old: Any = _MISSING) -> list[FieldError]:
    """Every rule of `schema` that `obj` fails; `old` is the object being updated, if any."""
    errs: list[FieldError] = []
    _walk(obj, old, schema, "", errs)
    return errs


def _walk(value: Any, old: Any, schema: Any, path: str, errs: list[FieldError]) -> None:
    if not isinstance(schema, dict) or value is None:
        return
    for rule in schema.get("x-kubernetes-validations") or []:
        if isinstance(rule, dict):
            error = _check(rule, value, old, schema, path)
            if error is not None:
                errs.append(error)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            _walk(child, old_map.get(key, _MISSING), sub, f"{path}.{key}" if path else key, errs)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(item, _MISSING, schema.get("items"), f"{path}[{i}]", errs)


def _check(rule: Schema, value: Any, old: Any, schema: Schema, path: str) -> FieldError | None:
    text = str(rule.get("rule") or "")
    program, error = _compile(text)
    if program is None:
        return invalid(path, _type_of(schema), f"compilation failed: {error}")
    activation = {"self": json_to_cel(value)}
    if _OLD_SELF.search(text):
        if old is _MISSING or old is None:
            return None  # a transition rule has nothing to compare on create
        activation["oldSelf"] = json_to_cel(old)
    try:
        result = program.evaluate(activation)
    except Exception as e:  # noqa: BLE001 - a rule that cannot be evaluated fails, as upstream's does
        return invalid(path, _type_of(schema), f"{_eval_detail(e)} evaluating rule: {_rule_text(rule)}")
    if isinstance(result, celtypes.BoolType) and bool(result):
        return None
    return _failure(rule, activation, path=_at(path, rule.get("fieldPath")), type_=_type_of(schema))


def _failure(rule: Schema, activation: dict[str, Any], *, path: str, type_: str) -> FieldError:
    message = _message(rule, activation)
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueForbidden":
        return FieldError(path, f"Forbidden: {message}", reason=reason)
    if reason == "FieldValueRequired":
        return FieldError(path, f"Required value: {message}", reason=reason)
    if reason == "FieldValueDuplicate":
        return FieldError(path, f"Duplicate value: {go_value(type_)}: {message}", reason=reason)
    return invalid(path, type_, message)


def _message(rule: Schema, activation: dict[str, Any]) -> str:
    expression = rule.get("messageExpression")
    if expression:
        program, _ = _compile(str(expression))
        try:
            text = program.evaluate(activation) if program is not None else None
        except Exception:  # noqa: BLE001 - upstream falls back to the static message
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return text.strip()
    if rule.get("message"):
        return str(rule["message"]).strip()
    return f"failed rule: {str(rule.get('rule') or '').strip()}"


def _rule_text(rule: Schema) -> str:
    return str(rule.get("message") or rule.get("rule") or "").strip()


_NO_SUCH_MEMBER = re.compile(r"no such member in mapping: '(.*)'")


def _eval_detail(error: Exception) -> str:
    """cel-go's wording of an evaluation error (`no such key: min`)."""
    args = getattr(error, "args", ())
    detail = str(args[0]) if args else type(error).__name__
    missing = _NO_SUCH_MEMBER.fullmatch(detail)
    return f"no such key: {missing.group(1)}" if missing else detail


def _at(path: str, field_path: Any) -> str:
    if not field_path:
        return path
    suffix = str(field_path)
    return f"{path}{suffix}" if path else suffix.lstrip(".")


def _type_of(schema: Schema) -> str:
    return str(schema.get("type") or "object")
