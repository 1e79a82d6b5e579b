"""Work-queue metrics: client-go's names, and the bookkeeping a queue drives with a fake clock."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kube.clock import FakeClock
from kube.metrics import new_registry, render
from kube.workqueue_metrics import (
    NoopMetricsProvider,
    PrometheusMetricsProvider,
    QueueMetrics,
)


def value(text: str, sample: str, /, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == sample and s.labels == labels:
                return s.value
    raise KeyError(sample, labels)


def test_an_item_through_the_queue_is_counted_and_timed() -> None:
    registry, clock = new_registry(), FakeClock()
    m: QueueMetrics[str] = QueueMetrics(name="deployment", provider=PrometheusMetricsProvider(registry), clock=clock)
    m.add("ns/a")
    m.add("ns/b")
    clock.step(2.0)
    m.get("ns/a")
    clock.step(3.0)
    m.update_unfinished_work()
    m.done("ns/a")
    m.retry()
    text = render(registry)
    assert value(text, "workqueue_adds_total", name="deployment") == 2
    assert value(text, "workqueue_depth", name="deployment") == 1
    assert value(text, "workqueue_queue_duration_seconds_count", name="deployment") == 1
    assert value(text, "workqueue_queue_duration_seconds_sum", name="deployment") == 2.0
    assert value(text, "workqueue_work_duration_seconds_sum", name="deployment") == 3.0
    assert value(text, "workqueue_unfinished_work_seconds", name="deployment") == 3.0
    assert value(text, "workqueue_longest_running_processor_seconds", name="deployment") == 3.0
    assert value(text, "workqueue_retries_total", name="deployment") == 1


def test_an_item_re_added_while_processing_waits_from_its_re_add() -> None:
    registry, clock = new_registry(), FakeClock()
    m: QueueMetrics[str] = QueueMetrics(name="q", provider=PrometheusMetricsProvider(registry), clock=clock)
    m.add("k")
    m.get("k")
    clock.step(5.0)
    m.add("k")  # dirty again while a worker has it
    clock.step(1.0)
    m.done("k")
    m.get("k")
    text = render(registry)
    assert value(text, "workqueue_queue_duration_seconds_sum", name="q") == 1.0
    assert value(text, "workqueue_work_duration_seconds_sum", name="q") == 6.0
    assert value(text, "workqueue_depth", name="q") == 0


def test_an_unnamed_queue_reports_nothing() -> None:
    registry = new_registry()
    m: QueueMetrics[str] = QueueMetrics(name="", provider=PrometheusMetricsProvider(registry))
    m.add("k")
    m.get("k")
    m.done("k")
    assert "workqueue_adds_total{" not in render(registry)


def test_the_noop_provider_accepts_everything() -> None:
    m: QueueMetrics[int] = QueueMetrics(name="q", provider=NoopMetricsProvider())
    m.add(1)
    m.get(1)
    m.update_unfinished_work()
    m.done(1)
    m.retry()
