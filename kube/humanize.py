"""Durations as kubectl prints them in AGE columns and describe output (`45s`, `5m2s`, `3h`, `2d`).

Shared by the API server (which fills Table rows) and pkctl (describe), so both agree.
"""

from __future__ import annotations

__all__ = ["human_duration"]


def human_duration(seconds: float) -> str:
    """kubectl's duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
    s = int(max(seconds, 0))
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if d < 365 * 2:
        return f"{d}d"
    y = d // 365
    return f"{y}y{d % 365}d" if d < 365 * 8 and d % 365 else f"{y}y"
