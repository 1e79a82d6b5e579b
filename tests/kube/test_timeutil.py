"""RFC 3339 timestamps: the forms the API writes, and what parsing accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from kube.timeutil import (
    format_micro_time,
    format_rfc3339_nano,
    format_time,
    parse_rfc3339,
    parse_time,
)

WHEN = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)


@pytest.mark.parametrize(("formatter", "expected"), [
    (format_time, "2024-01-02T03:04:05Z"),
    (format_micro_time, "2024-01-02T03:04:05.123456Z"),
    (format_rfc3339_nano, "2024-01-02T03:04:05.123456000Z"),
])
def test_formats(formatter: object, expected: str) -> None:
    assert callable(formatter)
    assert formatter(WHEN) == expected
    assert formatter(WHEN.timestamp()) == expected  # epoch seconds give the same text


def test_formatting_converts_other_zones_to_utc() -> None:
    plus_two = WHEN.astimezone(timezone(timedelta(hours=2)))
    assert format_time(plus_two) == "2024-01-02T03:04:05Z"


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-01-02T03:04:05Z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ("2024-01-02T03:04:05.123456Z", WHEN),
    ("2024-01-02T03:04:05.123456789Z", WHEN),           # nanoseconds truncated to micro
    ("2024-01-02T03:04:05.1Z", datetime(2024, 1, 2, 3, 4, 5, 100000, tzinfo=UTC)),
    ("2024-01-02T05:04:05+02:00", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ("2024-01-02t03:04:05z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ("2024-01-02T03:04:05", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),  # no offset: UTC
])
def test_parse(text: str, expected: datetime) -> None:
    parsed = parse_rfc3339(text)
    assert parsed == expected
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2024-01-02", "2024-13-02T03:04:05Z", "2024-01-02T03:04:05ZZ"])
def test_parse_rejects_what_is_not_a_timestamp(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339(text)
    assert parse_time(text) is None


def test_parse_time_passes_none_through() -> None:
    assert parse_time(None) is None


def test_format_and_parse_round_trip() -> None:
    assert parse_rfc3339(format_micro_time(WHEN)) == WHEN
    assert parse_rfc3339(format_time(WHEN)) == WHEN.replace(microsecond=0)
