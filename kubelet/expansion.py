"""`$(VAR)` expansion in env values, command and args, with upstream's rules.

Mirrors third_party/forked/golang/expansion: `$(NAME)` becomes NAME's value when NAME is
defined, and stays `$(NAME)` when it is not; `$$` is an escaped `$` (so `$$(NAME)` gives
the literal `$(NAME)`); a `$` before anything else, and an unclosed `$(`, are kept as they
are. Never raises.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["expand"]


def expand(text: str, *contexts: Mapping[str, str]) -> str:
    """`text` with every `$(NAME)` found in the first context that defines it replaced."""
    out: list[str] = []
    checkpoint = cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_name(text[cursor + 1:])
            out.append(_lookup(read, contexts) if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def _lookup(name: str, contexts: tuple[Mapping[str, str], ...]) -> str:
    for context in contexts:
        if name in context:
            return context[name]
    return f"$({name})"


def _read_name(rest: str) -> tuple[str, bool, int]:
    """(what was read, whether it is a variable name, how many characters it consumed)."""
    if rest[0] == "$":
        return "$", False, 1
    if rest[0] == "(":
        close = rest.find(")", 1)
        if close >= 0:
            return rest[1:close], True, close + 1
        return "$(", False, 1
    return "$" + rest[0], False, 1
