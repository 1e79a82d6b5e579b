"""Jittered exponential backoff on a fake clock."""

from __future__ import annotations

import pytest

from kube.backoff import ExponentialBackoff
from kube.clock import FakeClock


def test_doubles_from_initial_up_to_the_cap() -> None:
    backoff = ExponentialBackoff(FakeClock(), rand=lambda: 0.0)
    assert [backoff.next() for _ in range(8)] == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0])


@pytest.mark.parametrize(("rand", "expected"), [(0.0, 0.8), (0.5, 1.2), (0.999, 1.5992)])
def test_jitter_adds_up_to_the_delay_again(rand: float, expected: float) -> None:
    assert ExponentialBackoff(FakeClock(), rand=lambda: rand).next() == pytest.approx(expected)


def test_starts_over_after_a_quiet_period() -> None:
    clock = FakeClock()
    backoff = ExponentialBackoff(clock, rand=lambda: 0.0)
    assert [backoff.next() for _ in range(3)] == pytest.approx([0.8, 1.6, 3.2])
    clock.step(120.0)  # exactly the reset period: still backing off
    assert backoff.next() == pytest.approx(6.4)
    clock.step(120.1)
    assert backoff.next() == pytest.approx(0.8)


def test_reset() -> None:
    backoff = ExponentialBackoff(FakeClock(), rand=lambda: 0.0)
    backoff.next()
    backoff.next()
    backoff.reset()
    assert backoff.next() == pytest.approx(0.8)


@pytest.mark.parametrize(("initial", "cap", "factor", "jitter"), [(0, 30, 2, 1), (2, 1, 2, 1), (1, 30, 0.5, 1),
                                                                  (1, 30, 2, -1)])
def test_rejects_nonsense(initial: float, cap: float, factor: float, jitter: float) -> None:
    with pytest.raises(ValueError):
        ExponentialBackoff(FakeClock(), initial=initial, cap=cap, factor=factor, jitter=jitter)
