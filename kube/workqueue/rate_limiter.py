"""Rate limiters for requeues, with client-go's default: the max of per-item exponential
backoff (5 ms doubling to 1000 s) and an overall token bucket (10 qps, burst 100)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from kube.clock import Clock, RealClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...     # seconds to wait before the item may be retried
    def forget(self, item: Hashable) -> None: ...
    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay, self.max_delay = base_delay, max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        n = self._failures.get(item, 0)
        self._failures[item] = n + 1
        # Cap the exponent: 2**n past ~1000 failures no longer converts to a float.
        return min(self.base_delay * (2.0 ** min(n, 64)), self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket: sustained `qps` with bursts of `burst`; returns how long to wait."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        self.qps, self.burst = qps, burst
        self.clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self.clock.now()

    def when(self, item: Hashable) -> float:
        now = self.clock.now()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(lim.when(item) for lim in self.limiters)

    def forget(self, item: Hashable) -> None:
        for lim in self.limiters:
            lim.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(lim.num_requeues(item) for lim in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> RateLimiter:
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100, clock))
