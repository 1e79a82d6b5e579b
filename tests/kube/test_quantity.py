"""Resource quantities: parsing every suffix form, and the integer units components account in."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kube.quantity import cpu_millis, format_bytes, parse_quantity, to_int


@pytest.mark.parametrize(("text", "expected"), [
    ("1", Decimal(1)),
    ("1.5", Decimal("1.5")),
    (".5", Decimal("0.5")),
    ("5.", Decimal(5)),
    ("+2", Decimal(2)),
    ("-2", Decimal(-2)),
    ("100m", Decimal("0.1")),
    ("250u", Decimal("0.00025")),
    ("10n", Decimal("0.00000001")),
    ("1k", Decimal(1000)),
    ("2M", Decimal(2_000_000)),
    ("1G", Decimal(10**9)),
    ("1T", Decimal(10**12)),
    ("1P", Decimal(10**15)),
    ("1E", Decimal(10**18)),        # E alone is the exa suffix, not an exponent
    ("1Ki", Decimal(1024)),
    ("128Mi", Decimal(128 * 1024**2)),
    ("1.5Gi", Decimal(1536 * 1024**2)),
    ("1Ti", Decimal(1024**4)),
    ("1Pi", Decimal(1024**5)),
    ("1Ei", Decimal(1024**6)),
    ("1e3", Decimal(1000)),
    ("1E3", Decimal(1000)),
    ("12e-3", Decimal("0.012")),
    ("1.5e+2", Decimal(150)),
    (" 2Gi ", Decimal(2 * 1024**3)),
    (3, Decimal(3)),
    (0.5, Decimal("0.5")),
])
def test_parse_quantity(text: str | float, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "Mi", "abc", "1KB", "1ki", "1 Mi", "1e", "e3", "1.2.3", "0x10", "1mi"])
def test_what_is_not_a_quantity(text: str) -> None:
    with pytest.raises(ValueError, match="quantities must match"):
        parse_quantity(text)


@pytest.mark.parametrize(("text", "millis"), [
    ("1", 1000), ("0.5", 500), ("100m", 100), ("1.0001", 1001), ("1n", 1), ("2", 2000), ("0", 0),
])
def test_cpu_millis_rounds_up(text: str, millis: int) -> None:
    assert cpu_millis(text) == millis


@pytest.mark.parametrize(("text", "value"), [
    ("1Ki", 1024), ("128974848", 128974848), ("129e6", 129_000_000), ("123Mi", 123 * 1024**2), ("1.5", 2),
    ("110", 110), ("500m", 1),
])
def test_to_int_rounds_up(text: str, value: int) -> None:
    assert to_int(text) == value


@pytest.mark.parametrize(("n", "text"), [
    (8 * 1024**3, "8Gi"), (1536 * 1024**2, "1536Mi"), (1024, "1Ki"), (1000, "1000"), (0, "0"), (1024**6, "1Ei"),
])
def test_format_bytes_uses_the_largest_exact_binary_suffix(n: int, text: str) -> None:
    assert format_bytes(n) == text
