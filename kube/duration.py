"""Go duration strings (`1h30m`, `90s`, `1.5h`, `500ms`), as Go's time.ParseDuration reads them.

Kubernetes flags and query parameters (`--request-timeout`, `?timeout=`, an `@every` schedule)
carry durations in Go's syntax, so the API server reads them the same way. A leading `-` is
accepted (Go accepts it); whether a negative duration makes sense is the caller's question.
"""

from __future__ import annotations

import re

__all__ = ["parse_go_duration"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TERM = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds of `text`; ValueError with Go's own message (`time: invalid duration "x"`) otherwise."""
    sign, body = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.removeprefix("+"))
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    pos, total = 0, 0.0
    while pos < len(body):
        match = _TERM.match(body, pos)
        if match is None:
            missing_unit = re.fullmatch(r"[\d.]+", body[pos:]) is not None
            raise ValueError(f'time: missing unit in duration "{text}"' if missing_unit else
                             f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total
