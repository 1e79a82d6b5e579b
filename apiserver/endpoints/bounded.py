"""Decoding request bodies so that no single body can exhaust the server or reach a later stage malformed.

Mirrors what kube-apiserver gets from Go's decoders: encoding/json's nesting limit
("exceeded max depth"), go-yaml's alias-expansion limit ("document contains excessive
aliasing"), Go's replacement of lone UTF-16 surrogate escapes by U+FFFD, and a JSON that
knows no NaN, Infinity or out-of-range numbers. Guaranteed for a value returned by
`decode_json` or `decode_yaml`:
- it is plain JSON data (dict with str keys, list, str, int, finite float, bool, None),
  a tree (a YAML alias is expanded into its own copy) no deeper than `MAX_DEPTH`;
- no string in it holds a surrogate code point, so every later encode to UTF-8 succeeds;
- a YAML document's expansion stayed within a multiple of its own size.
`MAX_DEPTH` is lower than Go's 10000 because every later stage (schema checks, patches,
deep copies, encoders) walks objects recursively on Python's stack: with it, each of them
stays far from the interpreter's recursion limit, on the event loop as in worker threads.
Both functions are pure and CPU-bound: callers run them in a thread (`asyncio.to_thread`)
unless the body is small enough that the hop would cost more than the decode.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

__all__ = ["MAX_DEPTH", "DecodeError", "decode_json", "decode_yaml", "summarize", "too_large_message"]

MAX_DEPTH = 200
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# go-yaml refuses a document whose aliases make up most of what it decodes once the
# decoded node count passes these bounds (allowedAliasRatio in go-yaml's decode.go).
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000
# A document may expand by aliases to at most this multiple of its own size in scalar bytes.
_EXPANSION_FACTOR = 4


class DecodeError(ValueError):
    """A body that is not acceptable data; the message is the decoder's, in Go's words.

    `raw` is the refused body where the caller recorded it (for upstream's summary of it).
    """

    raw: bytes = b""


def summarize(raw: bytes, max_length: int = 30) -> str:
    """The start of a body for an error message, as upstream's summarizeData: text for an object, else hex."""
    if not raw:
        return "<empty>"
    head, more = raw[:max_length], " ..." if len(raw) > max_length else ""
    if raw[:1] == b"{":
        return head.decode("utf-8", "replace") + more
    return head.hex() + more


def too_large_message(limit: int) -> str:
    """kube-apiserver's message for a body over its limit (limitedReadBody)."""
    return f"Request entity too large: limit is {limit}"


# --- JSON ------------------------------------------------------------------------------------
def _refuse_constant(name: str) -> Any:
    raise DecodeError(f"invalid character '{name[0]}' looking for beginning of value")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise DecodeError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return value


def decode_json(raw: bytes) -> Any:
    """The JSON document in `raw`; DecodeError for syntax, NaN/Infinity, huge numbers or nesting over MAX_DEPTH.

    Raises UnicodeDecodeError/ValueError (json.JSONDecodeError) for a body that is not JSON at all.
    """
    try:
        doc = json.loads(raw, parse_constant=_refuse_constant, parse_float=_parse_float)
    except RecursionError:
        raise DecodeError(f"invalid character '{_first_too_deep(raw)}' exceeded max depth") from None
    _check_tree(doc, fix_surrogates=_SURROGATE_ESCAPE.search(raw) is not None,
                may_be_deep=raw.count(b"[") + raw.count(b"{") > MAX_DEPTH)
    return doc


def _first_too_deep(raw: bytes) -> str:
    """The bracket that opens level MAX_DEPTH + 1 (outside strings), the one Go's scanner names."""
    depth, in_string, escaped = 0, False, False
    for byte in raw:
        char = chr(byte)
        if in_string:
            escaped, in_string = (not escaped and char == "\\"), in_string and (escaped or char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return char
        elif char in "]}":
            depth -= 1
    return "{"


def _clean(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _check_tree(doc: Any, *, fix_surrogates: bool, may_be_deep: bool) -> None:
    """Replace surrogates in place and refuse nesting over MAX_DEPTH, without recursion."""
    if not (fix_surrogates or may_be_deep):
        return
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise DecodeError("invalid character '{' exceeded max depth")
            if fix_surrogates and any(_SURROGATE.search(k) for k in value):
                items = [(_clean(k), v) for k, v in value.items()]
                value.clear()
                value.update(items)
            for k, v in value.items():
                if isinstance(v, str):
                    if fix_surrogates:
                        value[k] = _clean(v)
                elif isinstance(v, (dict, list)):
                    stack.append((v, depth + 1))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise DecodeError("invalid character '[' exceeded max depth")
            for i, v in enumerate(value):
                if isinstance(v, str):
                    if fix_surrogates:
                        value[i] = _clean(v)
                elif isinstance(v, (dict, list)):
                    stack.append((v, depth + 1))


# --- YAML ------------------------------------------------------------------------------------
class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no annotations
    """YAML 1.1 as go-yaml reads it into interface{}: timestamps stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _measure(root: yaml.Node) -> tuple[int, int, int, int]:
    """(expanded nodes, expanded scalar bytes, expanded depth, distinct nodes) of a composed graph.

    Each distinct node is measured once (aliases share their anchor's node), post-order on
    an explicit stack; a node reached again while still open contains itself.
    """
    sizes: dict[int, tuple[int, int, int]] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_nodes.discard(key)
            measured = [sizes[id(c)] for c in children]
            scalar = isinstance(node, yaml.ScalarNode)
            # Depth counts containers only, as Go's JSON scanner does.
            sizes[key] = (1 + sum(m[0] for m in measured),
                          (len(node.value) if scalar else 0) + sum(m[1] for m in measured),
                          (0 if scalar else 1) + max((m[2] for m in measured), default=0))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise DecodeError("yaml: anchor value contains itself")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    nodes, scalar_bytes, depth = sizes[id(root)]
    return nodes, scalar_bytes, depth, len(sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_aliasing(root: yaml.Node, raw_size: int) -> None:
    decoded, scalar_bytes, depth, distinct = _measure(root)
    aliased = decoded - distinct
    if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
        raise DecodeError("yaml: document contains excessive aliasing")
    if scalar_bytes > _EXPANSION_FACTOR * max(raw_size, 1024) or decoded > _ALIAS_RATIO_HIGH:
        raise DecodeError("yaml: document contains excessive aliasing")
    if depth > MAX_DEPTH:
        raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")


def decode_yaml(raw: bytes) -> Any:
    """The single YAML document in `raw` as JSON data; DecodeError (or yaml.YAMLError) when refused.

    A DecodeError reads as sigs.k8s.io/yaml's ("error converting YAML to JSON: yaml: ...").
    """
    try:
        return _decode_yaml(raw)
    except DecodeError as e:
        raise DecodeError(f"error converting YAML to JSON: {e}") from None


def _decode_yaml(raw: bytes) -> Any:
    loader = _Loader(raw)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
        if node is None:
            return None
        _check_aliasing(node, len(raw))
        doc = loader.construct_document(node)
    finally:
        loader.dispose()
    return _to_json_data(doc)


def _json_key(key: Any) -> str:
    """A mapping key as YAMLToJSON spells it."""
    if isinstance(key, str):
        return _clean(key)
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (int, float)):
        return _json_scalar(key) if isinstance(key, float) else str(key)
    raise DecodeError(f"yaml: invalid map key: {key!r}")


def _json_scalar(value: float) -> str:
    if not math.isfinite(value):
        raise DecodeError(f"json: unsupported value: {value}")
    return repr(value)


def _to_json_data(doc: Any) -> Any:
    """Copy the constructed document into a JSON tree: aliases expanded, keys strings, no NaN, no bytes."""
    def convert(value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        if isinstance(value, dict):
            return {}, list(value.items())
        if isinstance(value, list):
            return [], list(enumerate(value))
        if isinstance(value, str):
            return _clean(value), []
        if isinstance(value, float):
            _json_scalar(value)
            return (int(value) if value.is_integer() and abs(value) < 2**63 else value), []
        if value is None or isinstance(value, (bool, int)):
            return value, []
        raise DecodeError(f"json: unsupported type: {type(value).__name__}")

    root, items = convert(doc)
    pending: list[tuple[Any, list[tuple[Any, Any]]]] = [(root, items)]
    while pending:
        target, entries = pending.pop()
        for key, value in entries:
            copied, sub = convert(value)
            if isinstance(target, dict):
                target[_json_key(key)] = copied
            else:
                target.append(copied)
            if sub:
                pending.append((copied, sub))
    return root
