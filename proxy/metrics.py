"""The proxy's Prometheus metrics, named as kube-proxy's (pkg/proxy/metrics/metrics.go).

- `kubeproxy_sync_proxy_rules_duration_seconds`: how long each sync took;
- `kubeproxy_sync_proxy_rules_last_timestamp_seconds`: when the last sync succeeded;
- `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds`: when the oldest change not yet
  synced was seen;
- `kubeproxy_network_programming_duration_seconds`: from the change of a Service's
  endpoints (the EndpointSlice's `endpoints.kubernetes.io/last-change-trigger-time`) to its
  rules being programmed;
- `kubeproxy_sync_proxy_rules_iptables_total{table}`: rules this proxy programmed;
- `kubeproxy_sync_proxy_rules_iptables_restore_failures_total`: failed syncs;
- `kubeproxy_sync_proxy_rules_service_changes_total`,
  `kubeproxy_sync_proxy_rules_endpoint_changes_total`: watch events that asked for a sync.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.registry import CollectorRegistry

from kube.metrics import new_registry

__all__ = ["ProxyMetrics"]

# kube-proxy's metrics.ExponentialBuckets(0.001, 2, 15): 1 ms to about 16 s.
_SYNC_BUCKETS = tuple(0.001 * 2 ** i for i in range(15))
# network programming: LinearBuckets(0.25, 0.25, 2), LinearBuckets(1, 1, 59), (60, 5, 12), (300, 30, 7).
_PROGRAMMING_BUCKETS = (0.25, 0.5, *range(1, 60), *range(60, 120, 5), *range(300, 510, 30))


class ProxyMetrics:
    """One registry per proxy process."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or new_registry()
        r = self.registry
        self.sync_duration = Histogram("kubeproxy_sync_proxy_rules_duration_seconds",
                                       "SyncProxyRules latency in seconds", buckets=_SYNC_BUCKETS, registry=r)
        self.last_sync = Gauge("kubeproxy_sync_proxy_rules_last_timestamp_seconds",
                               "The last time proxy rules were successfully synced", registry=r)
        self.last_queued = Gauge("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
                                 "The last time a sync of proxy rules was queued", registry=r)
        self.programming_duration = Histogram(
            "kubeproxy_network_programming_duration_seconds", "In Cluster Network Programming Latency in seconds",
            buckets=tuple(float(b) for b in _PROGRAMMING_BUCKETS), registry=r)
        self.rules = Gauge("kubeproxy_sync_proxy_rules_iptables_total",
                           "Total number of iptables rules owned by kube-proxy", ["table"], registry=r)
        self.restore_failures = Counter("kubeproxy_sync_proxy_rules_iptables_restore_failures",
                                        "Cumulative proxy iptables restore failures", registry=r)
        self.service_changes = Counter("kubeproxy_sync_proxy_rules_service_changes",
                                       "Cumulative proxy rules Service changes", registry=r)
        self.endpoint_changes = Counter("kubeproxy_sync_proxy_rules_endpoint_changes",
                                        "Cumulative proxy rules Endpoint changes", registry=r)
