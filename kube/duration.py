"""Go duration strings (`8760h`, `1h30m`, `90s`), as flags like `--cluster-signing-duration`
and `picokube token create --ttl` take them (time.ParseDuration's syntax, no sign)."""

from __future__ import annotations

import re

__all__ = ["parse_go_duration"]

_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: str) -> float:
    """Seconds of a Go duration; ValueError (`time: invalid duration "x"`) when it is not one."""
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not text or pos != len(text):
        raise ValueError(f'time: invalid duration "{text}"')
    return total
