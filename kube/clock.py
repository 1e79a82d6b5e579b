"""An injectable clock, so backoff, resync, heartbeats and deadlines can be driven by tests.

`RealClock` reads the monotonic clock, sleeps on the event loop and bounds work with
`asyncio.timeout`. `FakeClock` only moves when `step()` is called: it then wakes the
sleepers, and expires the timeouts, whose deadline has passed, so a test can play minutes
of backoff or lease expiry in milliseconds. Code that takes a `Clock` must use it for every
duration it measures or waits for, never `time` or `asyncio.sleep` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Protocol

# Wall-clock timestamps live in kube.timeutil; these names stay importable from here.
from kube.timeutil import now_micro_time, now_rfc3339

__all__ = ["Clock", "FakeClock", "RealClock", "now_micro_time", "now_rfc3339"]


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after `seconds` of this clock's time (at once for seconds <= 0)."""
        ...

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        """A context that cancels its body after `seconds` and then raises TimeoutError."""
        ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def timeout(self, seconds: float) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(max(0.0, seconds))


class FakeClock:
    """A clock that advances only when told to; sleepers and timeouts follow it, not real time."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self._now

    def _wake_at(self, seconds: float) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self._now + seconds, fut))
        return fut

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        await self._wake_at(seconds)

    @contextlib.asynccontextmanager
    async def timeout(self, seconds: float) -> AsyncIterator[None]:
        # asyncio.Timeout does the cancel-and-convert; this clock only decides when it fires.
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(None) as cm:
            active = True

            def expire(fut: asyncio.Future[None]) -> None:
                if active and not fut.cancelled():
                    cm.reschedule(loop.time())

            due = self._wake_at(max(0.0, seconds))
            due.add_done_callback(expire)
            if seconds <= 0:
                due.set_result(None)
            try:
                yield
            finally:
                active = False
                if not due.done():
                    due.cancel()

    def step(self, seconds: float) -> None:
        """Move time forward and wake every sleeper (and expire every timeout) now due."""
        self._now += seconds
        due = [s for s in self._sleepers if s[0] <= self._now]
        self._sleepers = [s for s in self._sleepers if s[0] > self._now]
        for _, fut in due:
            if not fut.done():
                fut.set_result(None)

    def has_waiters(self) -> bool:
        """True when some task sleeps on (or holds a timeout of) this clock."""
        return self.waiters() > 0

    def waiters(self) -> int:
        """How many sleeps and timeouts are pending."""
        return sum(1 for _, f in self._sleepers if not f.done())
