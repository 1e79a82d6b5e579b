"""The scheduler's metrics: Prometheus series by result and profile, and the benchmark's summary."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from scheduler.metrics import SchedulerMetrics


def test_attempts_and_bindings_show_in_both_the_scrape_and_the_summary() -> None:
    m = SchedulerMetrics()
    for seconds in (0.001, 0.002, 0.003):
        m.observe_attempt("scheduled", seconds)
    m.observe_attempt("unschedulable", 0.5, profile="other")
    m.observe_binding(True)
    m.observe_binding(False)
    summary = m.summary()
    assert summary["attempts"] == {"scheduled": 3, "unschedulable": 1}
    assert summary["bindings"] == {"succeeded": 1, "failed": 1}
    assert summary["cycle_seconds"]["count"] == 4 and summary["cycle_seconds"]["max"] == 0.5
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in text_string_to_metric_families(m.render()) for s in f.samples}
    assert got[("scheduler_schedule_attempts_total", (("profile", "default-scheduler"), ("result", "scheduled")))] == 3
    assert got[("scheduler_scheduling_attempt_duration_seconds_count",
                (("profile", "other"), ("result", "unschedulable")))] == 1
    assert got[("scheduler_binding_total", (("result", "failed"),))] == 1
    assert ("process_cpu_seconds_total", ()) in got


def test_an_idle_scheduler_summarises_to_zeroes() -> None:
    assert SchedulerMetrics().summary() == {
        "attempts": {}, "bindings": {},
        "cycle_seconds": {"count": 0, "p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}}
