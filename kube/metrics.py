"""Prometheus metrics for every component: one registry per component, rendered as text.

Mirrors k8s.io/component-base/metrics/legacyregistry in miniature. Each component builds its
own `CollectorRegistry` with `new_registry()` instead of using prometheus_client's global one,
so several components (or several test API servers) in one process never collide on a metric
name. Every registry carries the process metrics upstream components export
(`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`, ...) plus
the Python runtime's (`python_info`, `python_gc_*`), the counterpart of Go's `go_*` metrics.

`render(registry)` writes the Prometheus text exposition format 0.0.4 that kube components
serve on /metrics. prometheus_client adds a `<name>_created` series per counter and histogram,
which client_golang never writes; `render` leaves them out so scrapes look like upstream's.

Work-queue metrics, named as client-go's, live in `kube.workqueue_metrics`.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import (
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

__all__ = ["CONTENT_TYPE", "new_registry", "render", "render_bytes"]

# The media type of the text format 0.0.4, which every Prometheus server scrapes.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Metric types whose samples include a `_created` timestamp in prometheus_client.
_WITH_CREATED = frozenset({"counter", "histogram", "summary", "gaugehistogram"})


def new_registry() -> CollectorRegistry:
    """A fresh registry holding this process's process, platform and GC collectors.

    Each call returns an independent registry; registering the same metric name twice on one
    registry raises ValueError, on two registries it does not.
    """
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


class _WithoutCreated(Collector):
    """Collects `registry` and drops the `_created` samples client_golang does not emit."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterable[Metric]:
        for metric in self.registry.collect():
            if metric.type in _WITH_CREATED:
                metric.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield metric


def render_bytes(registry: CollectorRegistry) -> bytes:
    """The registry in the text exposition format (served with `CONTENT_TYPE`).

    Safe to call concurrently with updates: each metric is read under its own lock.
    """
    return generate_latest(_WithoutCreated(registry))


def render(registry: CollectorRegistry) -> str:
    """`render_bytes` decoded, for callers that build a text response."""
    return render_bytes(registry).decode()
