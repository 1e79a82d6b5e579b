"""RFC3339 timestamps as the API writes them (`2024-01-02T03:04:05Z`), to and from datetime.

Controllers compare API timestamps (a pod's Ready transition, a condition's lastUpdateTime)
with wall-clock time, so they take `now` as a parameter instead of reading the clock inside.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_time", "parse_time", "utc_now"]


def parse_time(value: str | None) -> datetime | None:
    """Parse an RFC3339 timestamp (with `Z` or an offset); None or garbage gives None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """Whole seconds, UTC, `Z`: the form metav1.Time marshals to."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> datetime:
    return datetime.now(UTC)
