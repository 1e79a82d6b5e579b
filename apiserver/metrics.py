"""The API server's request metrics, named as kube-apiserver names them.

Mirrors k8s.io/apiserver/pkg/endpoints/metrics, reduced to the labels picokube knows:
- `apiserver_request_total{verb,resource,code}`: a counter of every request answered;
- `apiserver_request_duration_seconds{verb,resource}`: their latency, with upstream's buckets;
- `apiserver_longrunning_requests`: the watches open right now;
- `apiserver_current_inflight_requests{request_kind}`: the seats of the max-in-flight limit in
  use now, `readOnly` and `mutating` (upstream reports the last second's high-water mark);
- `apiserver_dropped_requests_total{request_kind}`: requests refused with 429 by that limit
  (and, as `readOnly`, long-running requests over their per-user budget);
plus the process and Python runtime metrics every component exports (`kube.metrics`).

Each `Metrics` owns its registry, so several API servers in one process (tests) keep
separate counts. `observe` is safe from any thread and `render()` may run concurrently
with it; `inflight_watches` is meant for the event loop that serves the watches.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.registry import CollectorRegistry

from kube.metrics import CONTENT_TYPE, new_registry, render

__all__ = ["Metrics"]

# kube-apiserver's buckets for apiserver_request_duration_seconds.
_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0,
            15.0, 20.0, 30.0, 45.0, 60.0)


class Metrics:
    """The registry of one API server and the metrics the request pipeline updates."""

    content_type = CONTENT_TYPE

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else new_registry()
        self.requests = Counter("apiserver_request_total",
                                "Counter of apiserver requests broken out for each verb, resource and HTTP "
                                "response code.", ["verb", "resource", "code"], registry=self.registry)
        self.latency = Histogram("apiserver_request_duration_seconds",
                                 "Response latency distribution in seconds for each verb and resource.",
                                 ["verb", "resource"], buckets=_BUCKETS, registry=self.registry)
        self.longrunning = Gauge("apiserver_longrunning_requests",
                                 "Gauge of all active long-running apiserver requests (watches).",
                                 registry=self.registry)
        self.current_inflight = Gauge("apiserver_current_inflight_requests",
                                      "Maximal number of currently used inflight request limit of this apiserver "
                                      "per request kind in last second.", ["request_kind"], registry=self.registry)
        self.dropped_requests = Counter("apiserver_dropped_requests_total",
                                        "Number of requests dropped with 'Try again later' response",
                                        ["request_kind"], registry=self.registry)
        self._inflight_watches = 0

    def observe(self, *, verb: str, resource: str, code: int, seconds: float) -> None:
        """Count one answered request and its latency."""
        self.requests.labels(verb=verb, resource=resource, code=str(code)).inc()
        self.latency.labels(verb=verb, resource=resource).observe(seconds)

    @property
    def inflight_watches(self) -> int:
        """The watches open now; assigning (`+= 1`, `-= 1`) moves the longrunning gauge."""
        return self._inflight_watches

    @inflight_watches.setter
    def inflight_watches(self, value: int) -> None:
        self._inflight_watches = value
        self.longrunning.set(value)

    def render(self) -> str:
        """Everything in the Prometheus text format, served with `content_type`."""
        return render(self.registry)
