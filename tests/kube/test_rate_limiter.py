"""Rate limiters: per-item exponential backoff, the token bucket, and their max (the default)."""

from __future__ import annotations

import pytest

from kube.clock import FakeClock
from kube.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)


def test_item_exponential_doubles_per_item_up_to_the_cap() -> None:
    limiter = ItemExponentialFailureRateLimiter(base_delay=0.005, max_delay=0.1)
    assert [limiter.when("a") for _ in range(7)] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1])
    assert limiter.when("b") == pytest.approx(0.005)  # items back off independently
    assert limiter.num_requeues("a") == 7
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


def test_item_exponential_survives_very_many_failures() -> None:
    limiter = ItemExponentialFailureRateLimiter(base_delay=0.005, max_delay=1000.0)
    for _ in range(5000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_bucket_allows_a_burst_then_spaces_at_qps() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter(qps=2.0, burst=3, clock=clock)
    assert [bucket.when(i) for i in range(5)] == pytest.approx([0.0, 0.0, 0.0, 0.5, 1.0])
    clock.step(10.0)  # refills, but never above the burst
    assert [bucket.when(i) for i in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.5])
    assert bucket.num_requeues("x") == 0


@pytest.mark.parametrize(("failures", "expected"), [(1, 0.005), (5, 0.08), (20, 1000.0)])
def test_the_default_is_the_max_of_item_backoff_and_bucket(failures: int, expected: float) -> None:
    limiter = default_controller_rate_limiter(FakeClock())
    for _ in range(failures):
        delay = limiter.when("a")
    assert delay == pytest.approx(expected)
    assert limiter.num_requeues("a") == failures


def test_the_default_bucket_slows_a_storm_of_distinct_items() -> None:
    limiter = default_controller_rate_limiter(FakeClock())
    delays = [limiter.when(f"item-{i}") for i in range(110)]
    assert delays[:100] == pytest.approx([0.005] * 100)   # within the burst of 100: per-item only
    assert delays[100:] == pytest.approx([0.1 * n for n in range(1, 11)])  # then 10 per second


def test_max_of_forgets_in_every_limiter() -> None:
    first, second = ItemExponentialFailureRateLimiter(0.001, 1.0), ItemExponentialFailureRateLimiter(0.002, 1.0)
    limiter = MaxOfRateLimiter(first, second)
    assert limiter.when("a") == pytest.approx(0.002)
    limiter.forget("a")
    assert first.num_requeues("a") == second.num_requeues("a") == 0
