"""What the scheduler measured about itself, written as JSON to `--metrics-file` when it stops.

Mirrors the figures of kube-scheduler's `scheduler_scheduling_attempt_duration_seconds` and
`scheduler_schedule_attempts_total` metrics, reduced to a summary a benchmark can read:
attempts by result (scheduled / unschedulable / error), scheduling-cycle durations (the
synchronous filter-and-score decision, without the asynchronous binding) as p50/p90/p99/max,
and bindings that succeeded or failed. Recording is O(1) per attempt; durations are kept in
a bounded reservoir of the most recent 200 000 cycles.
"""

from __future__ import annotations

import json
import os
from collections import Counter, deque
from pathlib import Path
from typing import Any

__all__ = ["SchedulerMetrics"]

_RESERVOIR = 200_000


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


class SchedulerMetrics:
    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.bindings: Counter[str] = Counter()
        self._cycles: deque[float] = deque(maxlen=_RESERVOIR)

    def observe_attempt(self, result: str, seconds: float) -> None:
        """`result` is "scheduled", "unschedulable" or "error"."""
        self.attempts[result] += 1
        self._cycles.append(seconds)

    def observe_binding(self, ok: bool) -> None:
        self.bindings["succeeded" if ok else "failed"] += 1

    def summary(self) -> dict[str, Any]:
        cycles = sorted(self._cycles)
        return {
            "attempts": dict(self.attempts),
            "bindings": dict(self.bindings),
            "cycle_seconds": {"count": len(cycles), "p50": _pct(cycles, 0.50), "p90": _pct(cycles, 0.90),
                              "p99": _pct(cycles, 0.99), "max": cycles[-1] if cycles else 0.0},
        }

    def write(self, path: str | Path) -> None:
        """Write the summary atomically (a reader never sees half a file)."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(self.summary(), indent=2))
        os.replace(tmp, target)
