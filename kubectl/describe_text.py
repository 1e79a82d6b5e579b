"""The building blocks of `pkctl describe` output, laid out as kubectl lays it out.

`Section` collects `Key:  value` lines (aligned per block, nested by two spaces), maps
(`Labels:`), and tables (`Conditions:`, `Events:`); `age()` prints durations the way
kubectl's columns do (`45s`, `5m2s`, `3h`, `2d`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["Section", "age", "since"]


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def since(text: str | None) -> float | None:
    """Seconds from the RFC 3339 time `text` until now."""
    when = _parse_time(text)
    return None if when is None else (dt.datetime.now(dt.timezone.utc) - when).total_seconds()


def age(seconds: float | None) -> str:
    """kubectl's HumanDuration."""
    if seconds is None:
        return "<unknown>"
    s = max(0, int(seconds))
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
    if d < 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    return f"{d}d" if d < 365 * 2 else f"{d // 365}y"


class Section:
    """Lines of describe output; `field` pairs are aligned within each run of pairs at one depth."""

    def __init__(self) -> None:
        self._lines: list[tuple[int, str, str | None]] = []  # (depth, key or raw text, value or None=raw)

    def field(self, key: str, value: Any, depth: int = 0) -> None:
        text = "<none>" if value is None or value == "" else str(value)
        self._lines.append((depth, f"{key}:", text))

    def raw(self, text: str, depth: int = 0) -> None:
        self._lines.append((depth, text, None))

    def mapping(self, key: str, values: dict[str, Any] | None, depth: int = 0, sep: str = "=") -> None:
        items = [f"{k}{sep}{v}" for k, v in sorted((values or {}).items())]
        self.field(key, items[0] if items else "<none>", depth)
        for item in items[1:]:
            self._lines.append((depth, "", item))

    def listing(self, key: str, items: list[str], depth: int = 0) -> None:
        self.field(key, items[0] if items else "<none>", depth)
        for item in items[1:]:
            self._lines.append((depth, "", item))

    def table(self, key: str, header: list[str], rows: list[list[str]], depth: int = 0) -> None:
        if not rows:
            self.field(key, "<none>", depth)
            return
        self.raw(f"{key}:", depth)
        grid = [header, ["-" * len(h) for h in header], *rows]
        widths = [max(len(r[i]) for r in grid) for i in range(len(header))]
        for r in grid:
            self.raw("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip(), depth + 1)

    def render(self) -> str:
        out: list[str] = []
        i = 0
        while i < len(self._lines):
            depth, key, value = self._lines[i]
            if value is None:
                out.append("  " * depth + key)
                i += 1
                continue
            j = i
            while j < len(self._lines) and self._lines[j][2] is not None and self._lines[j][0] == depth:
                j += 1
            width = max(len(k) for _, k, _ in self._lines[i:j]) + 2
            for _, k, v in self._lines[i:j]:
                out.append(("  " * depth + k.ljust(width) + str(v)).rstrip())
            i = j
        return "\n".join(out) + "\n"
