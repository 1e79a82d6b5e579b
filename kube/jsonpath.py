"""kubectl's JSONPath templates (`-o jsonpath=...`, `wait --for=jsonpath=...`).

Supported, as in kubectl: literal text around `{...}` expressions; `.field`, `['field']`,
`..field` (recursive), `*`, `[n]`, `[-1]`, `[start:end]`, `[*]`, filters
`[?(@.type=="Ready")]` (==, !=, <, <=, >, >=, or bare existence), `{range ...}...{end}`,
string literals (`{"\\n"}`) and `@`. A template without braces is wrapped in them, as
kubectl's relaxed syntax does. Missing fields print nothing (kubectl's `get` allows missing
keys). Several results of one expression are separated by spaces; maps and lists print as
JSON, strings as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JSONPathError", "render", "evaluate"]


class JSONPathError(ValueError):
    """The template does not parse; the message is kubectl's style."""


@dataclass
class _Node:
    kind: str  # text | expr | range
    value: str = ""
    body: list[_Node] = field(default_factory=list)


def _parse(template: str) -> list[_Node]:
    if "{" not in template:
        template = "{" + template + "}"
    root: list[_Node] = []
    stack: list[list[_Node]] = [root]
    i = 0
    while i < len(template):
        start = template.find("{", i)
        if start < 0:
            stack[-1].append(_Node("text", template[i:]))
            break
        if start > i:
            stack[-1].append(_Node("text", template[i:start]))
        end, quote = start + 1, ""
        while end < len(template):
            ch = template[end]
            if quote:
                if ch == "\\":
                    end += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "}":
                break
            end += 1
        if end >= len(template):
            raise JSONPathError(f"unclosed action in template {template!r}")
        expr = template[start + 1:end].strip()
        if expr.startswith("range "):
            node = _Node("range", expr[6:].strip())
            stack[-1].append(node)
            stack.append(node.body)
        elif expr == "end":
            if len(stack) == 1:
                raise JSONPathError("not in range, nothing to end")
            stack.pop()
        else:
            stack[-1].append(_Node("expr", expr))
        i = end + 1
    if len(stack) != 1:
        raise JSONPathError("unclosed range")
    return root


_NAME = re.compile(r"[^.\[\]\s]+")
_FILTER = re.compile(r"^\s*@(?P<path>[^=!<>]*)\s*(?:(?P<op>==|!=|<=|>=|<|>)\s*(?P<value>.+?))?\s*$")


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return text


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _descend(value: Any) -> list[Any]:
    out = [value]
    for child in _children(value):
        out.extend(_descend(child))
    return out


def _compare(left: Any, op: str, right: Any) -> bool:
    try:
        if op == "==":
            return bool(left == right or str(left) == str(right))
        if op == "!=":
            return bool(left != right and str(left) != str(right))
        lf, rf = float(left), float(right)
    except (TypeError, ValueError):
        return False
    return {"<": lf < rf, "<=": lf <= rf, ">": lf > rf, ">=": lf >= rf}[op]


def evaluate(path: str, root: Any, current: Any | None = None) -> list[Any]:
    """Every value `path` selects (`.items[*].metadata.name`), missing ones left out."""
    path = path.strip()
    if path.startswith(("\"", "'")):
        return [_literal(path).encode().decode("unicode_escape")]
    if path.startswith("@"):
        values, i = [root if current is None else current], 1
    elif path.startswith("$"):
        values, i = [root], 1
    else:
        values, i = [root if current is None else current], 0
    while i < len(path):
        if path.startswith("..", i):
            i += 2
            m = _NAME.match(path, i)
            if not m:
                raise JSONPathError(f"unrecognized identifier after '..' in {path!r}")
            values = [v[m.group()] for x in values for v in _descend(x) if isinstance(v, dict) and m.group() in v]
            i = m.end()
        elif path[i] == ".":
            i += 1
            m = _NAME.match(path, i)
            if not m:
                continue  # a trailing or doubled dot selects the same values
            name, i = m.group(), m.end()
            values = [c for v in values for c in _children(v)] if name == "*" else \
                [v[name] for v in values if isinstance(v, dict) and name in v]
        elif path[i] == "[":
            end = _closing_bracket(path, i)
            inner, i = path[i + 1:end].strip(), end + 1
            values = _subscript(values, inner, root)
        else:
            raise JSONPathError(f"unrecognized character in action: {path[i]!r} in {path!r}")
    return values


def _closing_bracket(path: str, start: int) -> int:
    depth, quote = 0, ""
    for j in range(start, len(path)):
        ch = path[j]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError(f"unterminated array in {path!r}")


def _subscript(values: list[Any], inner: str, root: Any) -> list[Any]:
    if inner == "*":
        return [c for v in values for c in _children(v)]
    if inner.startswith("?(") and inner.endswith(")"):
        m = _FILTER.match(inner[2:-1])
        if not m:
            raise JSONPathError(f"unrecognized filter {inner!r}")
        out = []
        for item in (c for v in values for c in (v if isinstance(v, list) else _children(v))):
            found = evaluate(m.group("path"), root, item)
            if m.group("op") is None:
                if found:
                    out.append(item)
            elif any(_compare(f, m.group("op"), _literal(m.group("value"))) for f in found):
                out.append(item)
        return out
    if inner[:1] in "\"'":
        key = _literal(inner)
        return [v[key] for v in values if isinstance(v, dict) and key in v]
    if ":" in inner:
        a, _, b = inner.partition(":")
        b = b.split(":")[0]
        lo, hi = (int(a) if a.strip() else None), (int(b) if b.strip() else None)
        return [c for v in values if isinstance(v, list) for c in v[lo:hi]]
    try:
        index = int(inner)
    except ValueError:
        return [v[inner] for v in values if isinstance(v, dict) and inner in v]
    return [v[index] for v in values if isinstance(v, list) and -len(v) <= index < len(v)]


def _format(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _render(nodes: list[_Node], root: Any, current: Any | None) -> str:
    out: list[str] = []
    for node in nodes:
        if node.kind == "text":
            out.append(node.value)
        elif node.kind == "expr":
            out.append(" ".join(_format(v) for v in evaluate(node.value, root, current)))
        else:
            for item in evaluate(node.value, root, current):
                out.append(_render(node.body, root, item))
    return "".join(out)


def render(template: str, obj: Any) -> str:
    """The template applied to `obj`; JSONPathError if it does not parse."""
    return _render(_parse(template), obj, None)
