"""Go's strict standard base64, as `[]byte` JSON fields decode it.

A Secret's `data` values (and a ConfigMap's `binaryData`) are Go `[]byte`, which
encoding/json decodes with base64.StdEncoding: the standard alphabet, `=` padding required,
carriage returns and newlines ignored. A value that does not decode makes the whole body
undecodable, reported as `illegal base64 data at input byte N` with N the offset Go reports
(the offending character, or the start of an incomplete final group).
"""

from __future__ import annotations

import string

__all__ = ["base64_error"]

_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/")


def base64_error(text: str) -> str | None:
    """Why Go would refuse `text` as standard base64, or None when it decodes."""
    chars = [(i, ch) for i, ch in enumerate(text) if ch not in "\r\n"]
    for pos, (i, ch) in enumerate(chars):
        if ch == "=":
            return _check_padding(chars, pos)
        if ch not in _ALPHABET:
            return _at(i)
    if len(chars) % 4:
        return _at(chars[len(chars) - len(chars) % 4][0])
    return None


def _check_padding(chars: list[tuple[int, str]], pos: int) -> str | None:
    group_offset = pos % 4
    if group_offset < 2:  # `=` may only fill the last one or two places of a group
        return _at(chars[pos][0])
    needed = 4 - group_offset
    tail = chars[pos:]
    if len(tail) < needed or any(ch != "=" for _, ch in tail[:needed]):
        bad = next((i for i, ch in tail[:needed] if ch != "="), chars[-1][0] + 1)
        return _at(bad)
    if len(tail) > needed:
        return _at(tail[needed][0])
    return None


def _at(index: int) -> str:
    return f"illegal base64 data at input byte {index}"
