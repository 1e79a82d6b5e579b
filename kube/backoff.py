"""Jittered exponential backoff measured on an injected clock.

Mirrors apimachinery's wait.NewExponentialBackoffManager as client-go's Reflector configures
it (800 ms initial, factor 2, jitter 1.0, 30 s cap, reset after 2 min): each `next()` returns
the current delay plus up to `jitter` times itself at random, then doubles the delay up to
`cap`. When more than `reset_after` seconds have passed since the previous `next()`, the
delay starts over at `initial`, so an occasional failure after a long quiet period is
retried quickly while a tight failure loop slows down to one attempt every `cap` seconds.
Not safe to share between loops that should back off independently.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from kube.clock import Clock

__all__ = ["ExponentialBackoff"]


class ExponentialBackoff:
    def __init__(self, clock: Clock, *, initial: float = 0.8, cap: float = 30.0, factor: float = 2.0,
                 jitter: float = 1.0, reset_after: float = 120.0,
                 rand: Callable[[], float] = random.random) -> None:
        if initial <= 0 or cap < initial or factor < 1 or jitter < 0:
            raise ValueError("backoff needs 0 < initial <= cap, factor >= 1 and jitter >= 0")
        self._clock = clock
        self.initial, self.cap, self.factor, self.jitter, self.reset_after = initial, cap, factor, jitter, reset_after
        self._rand = rand
        self._delay = initial
        self._last: float | None = None

    def next(self) -> float:
        """The seconds to wait before the next attempt; advances the backoff."""
        now = self._clock.now()
        if self._last is None or now - self._last > self.reset_after:
            self._delay = self.initial
        self._last = now
        delay = self._delay
        self._delay = min(self._delay * self.factor, self.cap)
        return delay + self._rand() * self.jitter * delay

    def reset(self) -> None:
        """Start over at `initial` (after a success)."""
        self._delay = self.initial
        self._last = None
