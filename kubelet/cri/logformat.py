"""Container log lines, and the CRI log file format they are read from.

A CRI runtime writes each container's output to a file, one record per line:
`<RFC3339Nano time> <stdout|stderr> <F|P> <text>`; `P` marks a partial chunk (a long line
split at 16 KiB, or output without a trailing newline) that the next records complete, `F`
the full (last) chunk. `parse_cri_log` returns whole lines with the time of their first
chunk; malformed records are kept as text so nothing a container wrote is lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from kube.timeutil import parse_rfc3339

__all__ = ["LogLine", "parse_cri_log", "parse_time"]


@dataclass(frozen=True)
class LogLine:
    """One line a container wrote, with the epoch time it was written."""

    time: float
    text: str


def parse_time(stamp: str) -> float:
    """RFC3339 with up to nanoseconds (`2026-12-02T16:27:01.564531602Z`) as epoch seconds.

    Precision is microseconds; raises ValueError for anything else.
    """
    return parse_rfc3339(stamp).timestamp()


def parse_cri_log(text: str) -> list[LogLine]:
    lines: list[LogLine] = []
    pending: dict[str, tuple[float, list[str]]] = {}
    for record in text.splitlines():
        parts = record.split(" ", 3)
        if len(parts) < 3 or parts[1] not in ("stdout", "stderr") or parts[2] not in ("F", "P"):
            lines.append(LogLine(0.0, record))
            continue
        try:
            when = parse_time(parts[0])
        except ValueError:
            lines.append(LogLine(0.0, record))
            continue
        stream, tag, body = parts[1], parts[2], parts[3] if len(parts) > 3 else ""
        start, chunks = pending.pop(stream, (when, []))
        chunks.append(body)
        if tag == "P":
            pending[stream] = (start, chunks)
        else:
            lines.append(LogLine(start, "".join(chunks)))
    for start, chunks in pending.values():  # output that never ended with a newline
        lines.append(LogLine(start, "".join(chunks)))
    return lines
