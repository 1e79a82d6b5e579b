"""Whether a timestamp string decodes as a metav1.Time, and Go's error when it does not.

metav1.Time and MicroTime decode with Go's time.Parse(time.RFC3339, s): a four-digit year,
two-digit month, day, hour, minute and second, an optional fraction, then `Z` or a numeric
offset, each field within its range. A value that Go refuses here (a year 99999, month 13,
garbage) would be stored and then break every typed client that lists the object, so the
decoder refuses it first, with the message time.Parse gives.
"""

from __future__ import annotations

import calendar
import re

__all__ = ["RFC3339_LAYOUT", "rfc3339_error"]

RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"
# (layout element, pattern of the value it reads) in order; the offset is handled last.
_ELEMENTS = (("2006", r"[0-9]{4}"), ("-", "-"), ("01", r"[0-9]{2}"), ("-", "-"), ("02", r"[0-9]{2}"), ("T", "T"),
             ("15", r"[0-9]{2}"), (":", ":"), ("04", r"[0-9]{2}"), (":", ":"), ("05", r"[0-9]{2}"))
_FRACTION = re.compile(r"\.[0-9]+")
_OFFSET = re.compile(r"Z|[+-][0-9]{2}:[0-9]{2}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rfc3339_error(value: str) -> str | None:
    """None when Go's time.Parse(time.RFC3339, value) succeeds, else its error message."""
    head = f"parsing time {_quote(value)}"
    rest, fields = value, []
    for element, pattern in _ELEMENTS:
        match = re.match(pattern, rest)
        if match is None:
            return f"{head} as {_quote(RFC3339_LAYOUT)}: cannot parse {_quote(rest)} as {_quote(element)}"
        if pattern.startswith("["):
            fields.append(int(match.group()))
        rest = rest[match.end():]
    if (fraction := _FRACTION.match(rest)) is not None:
        rest = rest[fraction.end():]
    offset = _OFFSET.match(rest)
    if offset is None:
        return f"{head} as {_quote(RFC3339_LAYOUT)}: cannot parse {_quote(rest)} as \"Z07:00\""
    if rest[offset.end():]:
        return f"{head}: extra text: {_quote(rest[offset.end():])}"
    return _range_error(head, fields, offset.group())


def _range_error(head: str, fields: list[int], offset: str) -> str | None:
    year, month, day, hour, minute, second = fields
    if not 1 <= month <= 12:
        return f"{head}: month out of range"
    if not 1 <= day <= calendar.monthrange(year if year else 2000, month)[1]:
        return f"{head}: day out of range"
    if hour > 23:
        return f"{head}: hour out of range"
    if minute > 59:
        return f"{head}: minute out of range"
    if second > 59:
        return f"{head}: second out of range"
    if offset != "Z" and (int(offset[1:3]) > 23 or int(offset[4:6]) > 59):
        return f"{head}: time zone offset hour out of range"
    return None
