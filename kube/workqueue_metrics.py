"""Work-queue metrics named as client-go's, for a queue to report through.

Mirrors client-go util/workqueue/metrics.go and component-base's prometheus/workqueue
provider. Three layers, as upstream:

- the metric protocols (`GaugeMetric`, `SettableGaugeMetric`, `CounterMetric`,
  `HistogramMetric`), which prometheus_client's labelled children satisfy;
- a `MetricsProvider` makes those per queue name. `PrometheusMetricsProvider(registry)`
  registers, once per registry, `workqueue_depth`, `workqueue_adds_total`,
  `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
  `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds` and
  `workqueue_retries_total`, each labelled `name`; `NoopMetricsProvider` discards everything
  and is the default, as client-go's is;
- `QueueMetrics` is what a queue calls: `add(item)` when an item becomes dirty, `get(item)`
  when it is handed to a worker, `done(item)` when the worker finishes, `retry()` on every
  `add_after`, and `update_unfinished_work()` about every 500 ms from a task the queue owns.
  It turns those events into depth, queue latency and work duration, timing with the
  injected `Clock`.

`QueueMetrics` is not thread-safe; a queue calls it from its own event loop only.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.registry import CollectorRegistry

from kube.clock import Clock, RealClock

__all__ = [
    "CounterMetric",
    "GaugeMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PrometheusMetricsProvider",
    "QueueMetrics",
    "SettableGaugeMetric",
]

K = TypeVar("K", bound=Hashable)

# client-go's ExponentialBuckets(10e-9, 10, 12): 10 ns to 1000 s.
_DURATION_BUCKETS = tuple(1e-8 * 10 ** i for i in range(12))


class GaugeMetric(Protocol):
    def inc(self) -> None: ...
    def dec(self) -> None: ...


class SettableGaugeMetric(Protocol):
    def set(self, value: float) -> None: ...


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, amount: float) -> None: ...


class MetricsProvider(Protocol):
    """Makes the metrics of one queue, by its name (client-go workqueue.MetricsProvider)."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...
    def new_adds_metric(self, name: str) -> CounterMetric: ...
    def new_latency_metric(self, name: str) -> HistogramMetric: ...
    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...
    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric: ...
    def new_retries_metric(self, name: str) -> CounterMetric: ...


class _Noop:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def set(self, value: float) -> None:
        pass

    def observe(self, amount: float) -> None:
        pass


class NoopMetricsProvider:
    """Every metric discards what it is told."""

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _Noop()

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _Noop()

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _Noop()

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _Noop()

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _Noop()

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return _Noop()

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _Noop()


class PrometheusMetricsProvider:
    """The workqueue_* metrics on `registry`, one labelled series per queue name.

    Build one per registry: a second provider on the same registry raises ValueError
    (duplicate metric names). Queues sharing a name share their series, as upstream.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name"], registry=registry)
        self.adds = Counter("workqueue_adds_total", "Total number of adds handled by workqueue", ["name"],
                            registry=registry)
        self.latency = Histogram("workqueue_queue_duration_seconds",
                                 "How long in seconds an item stays in workqueue before being requested.",
                                 ["name"], buckets=_DURATION_BUCKETS, registry=registry)
        self.work_duration = Histogram("workqueue_work_duration_seconds",
                                       "How long in seconds processing an item from workqueue takes.",
                                       ["name"], buckets=_DURATION_BUCKETS, registry=registry)
        self.unfinished = Gauge("workqueue_unfinished_work_seconds",
                                "How many seconds of work has done that is in progress and hasn't been observed "
                                "by work_duration. Large values indicate stuck threads.", ["name"], registry=registry)
        self.longest = Gauge("workqueue_longest_running_processor_seconds",
                             "How many seconds has the longest running processor for workqueue been running.",
                             ["name"], registry=registry)
        self.retries = Counter("workqueue_retries_total", "Total number of retries handled by workqueue", ["name"],
                               registry=registry)

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return self.depth.labels(name=name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self.adds.labels(name=name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self.latency.labels(name=name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self.work_duration.labels(name=name)

    def new_unfinished_work_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self.unfinished.labels(name=name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> SettableGaugeMetric:
        return self.longest.labels(name=name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self.retries.labels(name=name)


class QueueMetrics(Generic[K]):
    """The bookkeeping of one queue's metrics (client-go defaultQueueMetrics).

    An unnamed queue reports nothing, as in client-go: metrics need a name to label them.
    """

    def __init__(self, *, name: str, provider: MetricsProvider | None = None, clock: Clock | None = None) -> None:
        p: MetricsProvider = provider if provider is not None and name else NoopMetricsProvider()
        self.clock = clock or RealClock()
        self.depth = p.new_depth_metric(name)
        self.adds = p.new_adds_metric(name)
        self.latency = p.new_latency_metric(name)
        self.work_duration = p.new_work_duration_metric(name)
        self.unfinished_work_seconds = p.new_unfinished_work_seconds_metric(name)
        self.longest_running_processor = p.new_longest_running_processor_seconds_metric(name)
        self.retries = p.new_retries_metric(name)
        self._added_at: dict[K, float] = {}
        self._started_at: dict[K, float] = {}

    def add(self, item: K) -> None:
        """An item became dirty (not a deduplicated add); its queue time starts at the first add."""
        self.adds.inc()
        self.depth.inc()
        self._added_at.setdefault(item, self.clock.now())

    def get(self, item: K) -> None:
        """The item was handed to a worker: observe how long it waited, start its work timer."""
        self.depth.dec()
        now = self.clock.now()
        self._started_at[item] = now
        added = self._added_at.pop(item, None)
        if added is not None:
            self.latency.observe(now - added)

    def done(self, item: K) -> None:
        """The worker finished the item: observe how long it worked."""
        started = self._started_at.pop(item, None)
        if started is not None:
            self.work_duration.observe(self.clock.now() - started)

    def retry(self) -> None:
        """An item was re-added later (`add_after`, hence every rate-limited requeue)."""
        self.retries.inc()

    def update_unfinished_work(self) -> None:
        """Set the total and the longest age of the work in progress; call it periodically."""
        now = self.clock.now()
        ages = [now - t for t in self._started_at.values()]
        self.unfinished_work_seconds.set(sum(ages))
        self.longest_running_processor.set(max(ages, default=0.0))
