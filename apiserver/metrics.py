"""Request metrics in the Prometheus text format, named as kube-apiserver names them."""

from __future__ import annotations

import bisect
from collections import defaultdict

__all__ = ["Metrics"]

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, str], int] = defaultdict(int)
        self.latency: dict[tuple[str, str], list[int]] = {}
        self.latency_sum: dict[tuple[str, str], float] = defaultdict(float)
        self.inflight_watches = 0

    def observe(self, *, verb: str, resource: str, code: int, seconds: float) -> None:
        self.requests[(verb, resource, str(code))] += 1
        key = (verb, resource)
        buckets = self.latency.setdefault(key, [0] * (len(_BUCKETS) + 1))
        buckets[bisect.bisect_left(_BUCKETS, seconds)] += 1
        self.latency_sum[key] += seconds

    def render(self) -> str:
        lines = ["# HELP apiserver_request_total Counter of apiserver requests by verb, resource and code.",
                 "# TYPE apiserver_request_total counter"]
        for (verb, resource, code), n in sorted(self.requests.items()):
            lines.append(f'apiserver_request_total{{verb="{verb}",resource="{resource}",code="{code}"}} {n}')
        lines += ["# HELP apiserver_request_duration_seconds Response latency by verb and resource.",
                  "# TYPE apiserver_request_duration_seconds histogram"]
        for (verb, resource), counts in sorted(self.latency.items()):
            total = 0
            for bound, n in zip((*_BUCKETS, float("inf")), counts):
                total += n
                le = "+Inf" if bound == float("inf") else repr(bound)
                lines.append(f'apiserver_request_duration_seconds_bucket{{verb="{verb}",resource="{resource}",'
                             f'le="{le}"}} {total}')
            lines.append(f'apiserver_request_duration_seconds_sum{{verb="{verb}",resource="{resource}"}} '
                         f"{self.latency_sum[(verb, resource)]:.6f}")
            lines.append(f'apiserver_request_duration_seconds_count{{verb="{verb}",resource="{resource}"}} {total}')
        lines += ["# TYPE apiserver_longrunning_requests gauge",
                  f"apiserver_longrunning_requests {self.inflight_watches}"]
        return "\n".join(lines) + "\n"
