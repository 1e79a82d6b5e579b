"""The scheduling queue: pending pods ordered by priority, with backoff and an unschedulable pool.

Mirrors kube-scheduler `internal/queue.PriorityQueue`:
- the *active queue* pops the pod of highest `spec.priority` first, and among equals the one
  queued first (the PrioritySort plugin's order); a key is in it at most once;
- the *backoff queue* holds pods whose last attempt failed until their per-pod backoff has
  passed (initial 1 s doubling to 10 s, upstream's `podInitialBackoffSeconds` /
  `podMaxBackoffSeconds`), then moves them to the active queue;
- the *unschedulable pool* remembers which pods found no node; `move_all_to_active(event)`
  retries them all at once on cluster events that may make room (a node added or changed, a
  pod deleted or finished);
- a popped key is *processing* until `done`; adding it meanwhile takes effect at `done`, so
  one pod is never in two attempts at once;
- `forget` drops a key's backoff count and unschedulable mark (bound, deleted, not ours).
Keys are `namespace/name`; the loop re-reads the pod from the informer, so a key that is
stale by the time it is popped is simply skipped. Loop-local: use from one event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import logging
import time
from collections import Counter
from typing import Any

from kube.clock import Clock, RealClock
from kube.tracing import Cause, current_cause
from kube.workqueue import ShutDown

__all__ = ["SchedulingQueue"]

logger = logging.getLogger(__name__)


class SchedulingQueue:
    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 clock: Clock | None = None) -> None:
        self._clock: Clock = clock or RealClock()
        self._initial_backoff, self._max_backoff = initial_backoff, max_backoff
        self._seq = itertools.count()
        self._active: list[tuple[int, int, str]] = []    # (-priority, order, key)
        self._in_active: set[str] = set()
        self._backoff: list[tuple[float, int, str]] = []  # (ready at, order, key)
        self._backoff_until: dict[str, float] = {}
        self._priority: dict[str, int] = {}
        self._unschedulable: set[str] = set()
        self._attempts: Counter[str] = Counter()
        self._processing: set[str] = set()
        self._dirty: set[str] = set()  # added while processing: active again at done()
        self._wakeup = asyncio.Event()
        self._shutting_down = False
        self._causes: dict[str, Cause] = {}

    # --- adding --------------------------------------------------------------------------
    def add(self, key: str, priority: int | None = None) -> None:
        """Make `key` active now (deduplicated); `priority` is the pod's, remembered for requeues."""
        if priority is not None:
            self._priority[key] = priority
        cause = current_cause()
        if cause is not None:
            self._causes[key] = dataclasses.replace(cause, queued=time.time())
        if key in self._processing:
            self._dirty.add(key)
            return
        self._backoff_until.pop(key, None)
        if key not in self._in_active:
            self._in_active.add(key)
            heapq.heappush(self._active, (-self._priority.get(key, 0), next(self._seq), key))
        self._wakeup.set()

    def _add_after_backoff(self, key: str) -> None:
        self._attempts[key] += 1
        delay = min(self._max_backoff, self._initial_backoff * 2 ** (self._attempts[key] - 1))
        ready = self._clock.now() + delay
        self._backoff_until[key] = ready
        heapq.heappush(self._backoff, (ready, next(self._seq), key))
        self._wakeup.set()

    def add_unschedulable(self, key: str) -> None:
        """The attempt found no node: retry after the backoff, or sooner on a cluster event."""
        self._unschedulable.add(key)
        self._add_after_backoff(key)

    def requeue_with_backoff(self, key: str) -> None:
        """The attempt failed (an error, a failed binding): retry after the backoff."""
        self._add_after_backoff(key)

    def move_all_to_active(self, event: str) -> None:
        """Retry every unschedulable pod now: `event` may have made room for them."""
        if not self._unschedulable:
            return
        logger.debug("Moving unschedulable pods to active", extra={"event": event, "pods": len(self._unschedulable)})
        for key in list(self._unschedulable):
            self.add(key)

    # --- taking --------------------------------------------------------------------------
    def _flush_backoff(self) -> None:
        now = self._clock.now()
        while self._backoff and self._backoff[0][0] <= now:
            ready, _, key = heapq.heappop(self._backoff)
            if self._backoff_until.get(key) == ready:  # not superseded or forgotten
                del self._backoff_until[key]
                self.add(key)

    async def pop(self) -> str:
        """Wait for the highest-priority active key; raise `ShutDown` after `shut_down()`."""
        while True:
            if self._shutting_down:
                raise ShutDown()
            self._flush_backoff()
            while self._active:
                _, _, key = heapq.heappop(self._active)
                if key in self._in_active:
                    self._in_active.discard(key)
                    self._processing.add(key)
                    return key
            self._wakeup.clear()
            waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._wakeup.wait())]
            if self._backoff:
                waits.append(asyncio.ensure_future(self._clock.sleep(self._backoff[0][0] - self._clock.now())))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()

    def done(self, key: str) -> None:
        """The attempt for `key` is over; a copy added meanwhile becomes poppable."""
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    # --- bookkeeping ---------------------------------------------------------------------
    def cause_of(self, key: str) -> Cause | None:
        """The tracing cause of `key`'s latest add; kept across retries until `forget`."""
        return self._causes.get(key)

    def is_unschedulable(self, key: str) -> bool:
        return key in self._unschedulable

    def forget(self, key: str) -> None:
        self._unschedulable.discard(key)
        self._attempts.pop(key, None)
        self._backoff_until.pop(key, None)
        self._priority.pop(key, None)
        self._causes.pop(key, None)

    def num_attempts(self, key: str) -> int:
        return self._attempts.get(key, 0)

    def __len__(self) -> int:
        """Keys poppable now (active, or done backing off)."""
        self._flush_backoff()
        return len(self._in_active)

    async def shut_down(self) -> None:
        self._shutting_down = True
        self._wakeup.set()
