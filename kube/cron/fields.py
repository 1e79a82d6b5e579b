"""The five fields of a standard cron schedule checked as robfig/cron checks them.

cronsim (which evaluates schedules) accepts more than robfig/cron's ParseStandard does (`L`,
`W`, `#`, a day-of-week 7) and words its errors differently; Kubernetes' validation messages
are robfig's, so every comma-separated range is checked here first: `*` or `?`, a number
or a name (months `jan`..`dec`, days `sun`..`sat`, any case), `a-b`, an optional `/step`,
within the field's bounds.
"""

from __future__ import annotations

__all__ = ["check_fields", "FieldSyntaxError"]

_MONTHS = {name: i + 1 for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 6, _DAYS))


class FieldSyntaxError(ValueError):
    """A field robfig/cron rejects; the message is robfig's."""


def _number(text: str, names: dict[str, int]) -> int:
    if (named := names.get(text.lower())) is not None:
        return named
    try:
        value = int(text, 10)
    except ValueError:
        message = f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        raise FieldSyntaxError(message) from None
    if value < 0:
        raise FieldSyntaxError(f"negative number ({value}) not allowed: {text}")
    return value


def _check_range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    """getRange: one `start[-end][/step]` or `*[/step]` of a field."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _number(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], names)
        else:
            raise FieldSyntaxError(f"too many hyphens: {expr}")
    if len(range_and_step) == 2:
        step = _number(range_and_step[1], {})
        if single and low_and_high[0] not in ("*", "?"):
            end = high  # `N/step` is `N-max/step`
        if step <= 0:
            raise FieldSyntaxError(f"step of range should be a positive number: {expr}")
    elif len(range_and_step) > 2:
        raise FieldSyntaxError(f"too many slashes: {expr}")
    if start < low:
        raise FieldSyntaxError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise FieldSyntaxError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise FieldSyntaxError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")


def check_fields(fields: list[str]) -> None:
    """Raise FieldSyntaxError for the first range of the five fields robfig/cron would reject."""
    for field, (low, high, names) in zip(fields, _BOUNDS, strict=True):
        for expr in field.split(","):
            _check_range(expr, low, high, names)
