"""An injectable clock, so backoff, resync and heartbeats can be driven by tests.

`RealClock` reads the monotonic clock and sleeps on the event loop; `FakeClock` only moves
when `step()` is called and wakes the sleepers whose deadline has passed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

# Wall-clock timestamps live in kube.timeutil; these names stay importable from here.
from kube.timeutil import now_micro_time, now_rfc3339

__all__ = ["Clock", "FakeClock", "RealClock", "now_micro_time", "now_rfc3339"]


class Clock(Protocol):
    def now(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock that advances only when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self._now + seconds, fut))
        await fut

    def step(self, seconds: float) -> None:
        self._now += seconds
        due = [s for s in self._sleepers if s[0] <= self._now]
        self._sleepers = [s for s in self._sleepers if s[0] > self._now]
        for _, fut in due:
            if not fut.done():
                fut.set_result(None)

    def has_waiters(self) -> bool:
        return any(not f.done() for _, f in self._sleepers)
