"""The building blocks of `pkctl describe` output, laid out as kubectl lays it out.

`Section` collects `Key:  value` lines (aligned per block, nested by two spaces), maps
(`Labels:`), and tables (`Conditions:`, `Events:`); `age()` prints durations the way
kubectl's columns do (`45s`, `5m2s`, `3h`, `2d`).
"""

from __future__ import annotations

from typing import Any

from kube.humanize import human_duration
from kube.timeutil import parse_time, utc_now

__all__ = ["Section", "age", "since"]


def since(text: str | None) -> float | None:
    """Seconds from the RFC 3339 time `text` until now."""
    when = parse_time(text)
    return None if when is None else (utc_now() - when).total_seconds()


def age(seconds: float | None) -> str:
    """kubectl's HumanDuration, `<unknown>` when there is no time."""
    return "<unknown>" if seconds is None else human_duration(seconds)


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
