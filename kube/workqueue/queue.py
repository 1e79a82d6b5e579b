"""A work queue with client-go semantics, for asyncio.

Guarantees (client-go util/workqueue):
- an item is never processed by two workers at once: `get()` marks it processing, and an
  `add()` of a processing item is parked ("dirty") and handed out again after `done()`;
- adding an item that is already waiting is a no-op (dedup), so bursts of events for one
  key cost one reconcile;
- `done()` is idempotent: a second `done` for the same `get` changes nothing;
- `add_after` / `add_rate_limited` re-add later, on the queue's clock (per-item backoff via
  the rate limiter);
- `shut_down()` makes waiting and future `get()` calls raise `ShutDown`, even while items
  remain, and drops pending delayed adds;
- each add remembers its tracing `Cause` (the event being handled, or the span current at
  the add, `kube.tracing.current_cause`); the latest one wins, and `take_cause(item)` hands it
  to the worker, so the reconcile continues the trace of the change that woke it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from kube.clock import Clock, RealClock
from kube.tracing import Cause, current_cause
from kube.workqueue.rate_limiter import RateLimiter, default_controller_rate_limiter

__all__ = ["ShutDown", "WorkQueue"]

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """The queue was shut down."""


class WorkQueue(Generic[K]):
    """A deduplicating FIFO of keys with a processing set; all methods run on one event loop."""

    def __init__(self, *, name: str = "", rate_limiter: RateLimiter | None = None, clock: Clock | None = None) -> None:
        self.name = name
        self.clock = clock or RealClock()
        self.rate_limiter = rate_limiter or default_controller_rate_limiter(self.clock)
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._delayed: set[asyncio.Task[None]] = set()
        self._causes: dict[K, Cause] = {}

    def add(self, item: K) -> None:
        """Queue `item` unless it is already waiting; safe from sync callbacks on the loop."""
        self._add(item, current_cause())

    def _add(self, item: K, cause: Cause | None) -> None:
        if self._shutting_down:
            return
        if cause is not None:
            self._causes[item] = dataclasses.replace(cause, queued=time.time())
        if item in self._dirty:
            return
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def get(self) -> K:
        """Wait for an item and mark it processing; raise ShutDown when the queue is shut down.

        Every item returned must be handed back with exactly one `done(item)`.
        """
        while not self._queue and not self._shutting_down:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # woken, then cancelled: pass the wake-up on
                raise
        if self._shutting_down:
            raise ShutDown(self.name)
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: K) -> None:
        """Finish processing; an item re-added meanwhile is queued again now.

        Only the first `done` after a `get` counts: a repeated one must not queue the item a
        second time, or two workers would get it at once.
        """
        if item not in self._processing:
            return
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one()

    def add_after(self, item: K, delay: float) -> None:
        """Add `item` once `delay` seconds of the queue's clock have passed (now if delay <= 0)."""
        cause = current_cause()
        if delay <= 0:
            self._add(item, cause)
            return
        if self._shutting_down:
            return

        async def later() -> None:
            await self.clock.sleep(delay)
            self._add(item, cause)

        task = asyncio.get_running_loop().create_task(later())
        self._delayed.add(task)
        task.add_done_callback(self._delayed.discard)

    def take_cause(self, item: K) -> Cause | None:
        """The cause of `item`'s latest add (once: a second call returns None)."""
        return self._causes.pop(item, None)

    def add_rate_limited(self, item: K) -> None:
        """Add `item` after the delay its rate limiter gives it (per-item backoff, overall bucket)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: K) -> None:
        """Stop tracking `item`'s failures: its next rate-limited add starts from the base delay."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return self.rate_limiter.num_requeues(item)

    def __len__(self) -> int:
        """Items waiting to be handed out (not those processing or delayed)."""
        return len(self._queue)

    def is_processing(self, item: K) -> bool:
        return item in self._processing

    def shutting_down(self) -> bool:
        return self._shutting_down

    async def shut_down(self) -> None:
        """Refuse new items, drop delayed adds, and make every waiting and later `get` raise ShutDown."""
        self._shutting_down = True
        self._causes.clear()
        for task in list(self._delayed):
            task.cancel()
        while self._waiters:
            self._wake_one()
