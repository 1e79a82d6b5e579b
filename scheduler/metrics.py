"""What the scheduler measures about itself: Prometheus metrics, and a JSON summary on exit.

Mirrors kube-scheduler's pkg/scheduler/metrics for the figures picokube has:
- `scheduler_schedule_attempts_total{result,profile}`: attempts by result (`scheduled`,
  `unschedulable`, `error`) and profile (the scheduler name);
- `scheduler_scheduling_attempt_duration_seconds{result,profile}`: the scheduling cycle (the
  synchronous filter-and-score decision, without the asynchronous binding), with upstream's
  buckets (1 ms doubling to about 16 s);
- `scheduler_binding_total{result}` (`succeeded`, `failed`): picokube's own, since upstream
  reads binding outcomes off its extension-point histograms;
plus the process metrics every component exports. `render()` gives the text format.

`summary()` and `write(path)` keep the benchmark's JSON: attempts and bindings by result,
and exact cycle-duration percentiles (p50/p90/p99/max) over a bounded reservoir of the most
recent 200 000 cycles (a histogram only estimates them). Recording is O(1) per attempt.
"""

from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path
from typing import Any

from prometheus_client import Counter, Histogram
from prometheus_client.registry import CollectorRegistry

from kube.metrics import CONTENT_TYPE, new_registry, render

__all__ = ["DEFAULT_PROFILE", "SchedulerMetrics"]

_RESERVOIR = 200_000
DEFAULT_PROFILE = "default-scheduler"
# kube-scheduler's ExponentialBuckets(0.001, 2, 15).
_BUCKETS = tuple(0.001 * 2 ** i for i in range(15))


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def _totals(counter: Counter, label: str) -> dict[str, int]:
    """The counter's `_total` samples summed by one label's value."""
    totals: dict[str, int] = {}
    for metric in counter.collect():
        for s in metric.samples:
            if s.name.endswith("_total"):
                totals[s.labels[label]] = totals.get(s.labels[label], 0) + int(s.value)
    return totals


class SchedulerMetrics:
    """The scheduler's registry and metrics; call it from the scheduler's event loop."""

    content_type = CONTENT_TYPE

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else new_registry()
        self.attempts = Counter("scheduler_schedule_attempts_total",
                                "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
                                "could not be scheduled, while 'error' means an internal scheduler problem.",
                                ["result", "profile"], registry=self.registry)
        self.attempt_duration = Histogram("scheduler_scheduling_attempt_duration_seconds",
                                          "Scheduling attempt latency in seconds "
                                          "(the scheduling cycle, without binding)",
                                          ["result", "profile"], buckets=_BUCKETS, registry=self.registry)
        self.bindings = Counter("scheduler_binding_total", "Number of pod bindings, by the result.",
                                ["result"], registry=self.registry)
        self._cycles: deque[float] = deque(maxlen=_RESERVOIR)

    def observe_attempt(self, result: str, seconds: float, *, profile: str = DEFAULT_PROFILE) -> None:
        """`result` is "scheduled", "unschedulable" or "error"."""
        self.attempts.labels(result=result, profile=profile).inc()
        self.attempt_duration.labels(result=result, profile=profile).observe(seconds)
        self._cycles.append(seconds)

    def observe_binding(self, ok: bool) -> None:
        self.bindings.labels(result="succeeded" if ok else "failed").inc()

    def render(self) -> str:
        """Everything in the Prometheus text format, served with `content_type`."""
        return render(self.registry)

    def summary(self) -> dict[str, Any]:
        cycles = sorted(self._cycles)
        return {
            "attempts": _totals(self.attempts, "result"),
            "bindings": _totals(self.bindings, "result"),
            "cycle_seconds": {"count": len(cycles), "p50": _pct(cycles, 0.50), "p90": _pct(cycles, 0.90),
                              "p99": _pct(cycles, 0.99), "max": cycles[-1] if cycles else 0.0},
        }

    def write(self, path: str | Path) -> None:
        """Write the summary atomically (a reader never sees half a file)."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(self.summary(), indent=2))
        os.replace(tmp, target)
