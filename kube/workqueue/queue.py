"""A work queue with client-go semantics, for asyncio.

Guarantees (client-go util/workqueue):
- an item is never processed by two workers at once: `get()` marks it processing, and an
  `add()` of a processing item is parked ("dirty") and handed out again after `done()`;
- adding an item that is already waiting is a no-op (dedup), so bursts of events for one
  key cost one reconcile;
- `add_after` / `add_rate_limited` re-add later (per-item backoff via the rate limiter);
- `shut_down()` makes waiting and future `get()` calls raise `ShutDown`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, Hashable, TypeVar

from kube.clock import Clock, RealClock
from kube.workqueue.rate_limiter import RateLimiter, default_controller_rate_limiter

__all__ = ["WorkQueue", "ShutDown"]

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down."""


class WorkQueue(Generic[K]):
    def __init__(self, *, name: str = "", rate_limiter: RateLimiter | None = None, clock: Clock | None = None) -> None:
        self.name = name
        self.clock = clock or RealClock()
        self.rate_limiter = rate_limiter or default_controller_rate_limiter(self.clock)
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._cond = asyncio.Condition()
        self._shutting_down = False
        self._delayed: set[asyncio.Task[None]] = set()

    def add(self, item: K) -> None:
        """Queue `item` unless it is already waiting; safe from sync callbacks on the loop."""
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._notify()

    def _notify(self) -> None:
        async def wake() -> None:
            async with self._cond:
                self._cond.notify()
        if self._cond._waiters:  # type: ignore[attr-defined]
            task = asyncio.get_running_loop().create_task(wake())
            self._delayed.add(task)
            task.add_done_callback(self._delayed.discard)

    async def get(self) -> K:
        """Wait for an item and mark it processing; raise ShutDown when the queue is shut down."""
        async with self._cond:
            while not self._queue and not self._shutting_down:
                await self._cond.wait()
            if self._shutting_down:
                raise ShutDown(self.name)
            item = self._queue.popleft()
            self._processing.add(item)
            self._dirty.discard(item)
            return item

    def done(self, item: K) -> None:
        """Finish processing; an item re-added meanwhile is queued again now."""
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._notify()

    def add_after(self, item: K, delay: float) -> None:
        if delay <= 0:
            self.add(item)
            return

        async def later() -> None:
            await self.clock.sleep(delay)
            self.add(item)

        task = asyncio.get_running_loop().create_task(later())
        self._delayed.add(task)
        task.add_done_callback(self._delayed.discard)

    def add_rate_limited(self, item: K) -> None:
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: K) -> None:
        self.rate_limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self.rate_limiter.num_requeues(item)

    def __len__(self) -> int:
        return len(self._queue)

    def is_processing(self, item: K) -> bool:
        return item in self._processing

    async def shut_down(self) -> None:
        self._shutting_down = True
        for task in list(self._delayed):
            task.cancel()
        async with self._cond:
            self._cond.notify_all()
