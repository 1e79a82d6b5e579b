"""Timestamps as the API writes them: RFC 3339 in UTC, to and from `datetime` and epoch seconds.

Mirrors apimachinery's metav1.Time and metav1.MicroTime marshalling:
- `format_time` gives whole seconds with a `Z` (`2024-01-02T03:04:05Z`), the form of
  creationTimestamp, condition transition times and event timestamps;
- `format_micro_time` gives six fractional digits (`...05.123456Z`), the form of a Lease's
  renewTime and acquireTime;
- `format_rfc3339_nano` gives nine fractional digits, the form CRI log records carry.
`parse_rfc3339` reads any of these (and numeric offsets, and up to nine fractional digits,
truncated to microseconds) and always returns an aware datetime in UTC; it raises
ValueError on anything else. `parse_time` is the forgiving variant for optional fields:
None or garbage gives None, so a malformed timestamp on an object never crashes a loop.
Every formatter accepts an aware datetime or epoch seconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = [
    "format_micro_time",
    "format_rfc3339_nano",
    "format_time",
    "now_micro_time",
    "now_rfc3339",
    "parse_rfc3339",
    "parse_time",
    "utc_now",
]

_RFC3339 = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<time>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?$")


def _as_datetime(when: datetime | float) -> datetime:
    if isinstance(when, datetime):
        return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return datetime.fromtimestamp(when, UTC)


def utc_now() -> datetime:
    """The wall-clock time as an aware datetime in UTC."""
    return datetime.now(UTC)


def format_time(when: datetime | float) -> str:
    """A metav1.Time: RFC 3339, UTC, whole seconds (the fraction is dropped, not rounded)."""
    return _as_datetime(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(when: datetime | float) -> str:
    """A metav1.MicroTime: RFC 3339, UTC, exactly six fractional digits."""
    return _as_datetime(when).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_rfc3339_nano(when: datetime | float) -> str:
    """RFC 3339 with nine fractional digits (microsecond precision, zero-padded), as CRI logs use."""
    return _as_datetime(when).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def now_rfc3339() -> str:
    """The wall-clock time as a metav1.Time string."""
    return format_time(utc_now())


def now_micro_time() -> str:
    """The wall-clock time as a metav1.MicroTime string."""
    return format_micro_time(utc_now())


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp into an aware UTC datetime; raise ValueError if it is not one.

    A missing offset is read as UTC (the API only ever writes UTC); fractional digits past
    the sixth are dropped, since datetime holds microseconds.
    """
    m = _RFC3339.match(text.strip())
    if m is None:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    micros = (m["frac"] or "")[:6].ljust(6, "0")
    zone = m["zone"] or "Z"
    offset = "+00:00" if zone in ("Z", "z") else zone
    return datetime.fromisoformat(f"{m['date']}T{m['time']}.{micros}{offset}").astimezone(UTC)


def parse_time(text: str | None) -> datetime | None:
    """Like `parse_rfc3339`, but None, empty or malformed input gives None instead of raising."""
    if not text:
        return None
    try:
        return parse_rfc3339(text)
    except ValueError:
        return None
