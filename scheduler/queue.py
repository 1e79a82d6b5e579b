"""The scheduling queue: pending pod keys waiting for a scheduling attempt, with backoff.

A reduced kube-scheduler `internal/queue.PriorityQueue` built on the shared client-go style
`WorkQueue` (dedup, one attempt per key at a time):
- `add` makes a key active now (a new or changed pending pod);
- `add_unschedulable` records that the last attempt found no node and retries the key after
  a per-pod exponential backoff (initial 1 s doubling to 10 s, as upstream's
  `podInitialBackoffSeconds`/`podMaxBackoffSeconds`);
- `move_all_to_active(event)` retries every unschedulable pod at once, for cluster events
  that may make room (a node added or changed, a pod deleted or finished);
- `requeue_with_backoff` retries after an error (a failed binding), with the same backoff;
- `forget` drops a key's backoff and unschedulable mark (bound, deleted, no longer ours).
Keys are `namespace/name`; the loop re-reads the pod from the informer, so a key that is
stale by the time it is popped is simply skipped. Loop-local: use from one event loop.
"""

from __future__ import annotations

import logging

from kube.clock import Clock
from kube.workqueue import ItemExponentialFailureRateLimiter, WorkQueue

__all__ = ["SchedulingQueue"]

logger = logging.getLogger(__name__)


class SchedulingQueue:
    def __init__(self, *, initial_backoff: float = 1.0, max_backoff: float = 10.0,
                 clock: Clock | None = None) -> None:
        self._queue: WorkQueue[str] = WorkQueue(
            name="scheduler", rate_limiter=ItemExponentialFailureRateLimiter(initial_backoff, max_backoff),
            clock=clock)
        self._unschedulable: set[str] = set()

    def add(self, key: str) -> None:
        """Make `key` active now (deduplicated with a waiting copy)."""
        self._queue.add(key)

    async def pop(self) -> str:
        """Wait for the next key; raise `kube.workqueue.ShutDown` after `shut_down()`."""
        return await self._queue.get()

    def done(self, key: str) -> None:
        """The attempt for `key` is over; a copy added meanwhile becomes poppable."""
        self._queue.done(key)

    def add_unschedulable(self, key: str) -> None:
        self._unschedulable.add(key)
        self._queue.add_rate_limited(key)

    def requeue_with_backoff(self, key: str) -> None:
        self._queue.add_rate_limited(key)

    def is_unschedulable(self, key: str) -> bool:
        return key in self._unschedulable

    def move_all_to_active(self, event: str) -> None:
        """Retry every unschedulable pod now: `event` may have made room for them."""
        if not self._unschedulable:
            return
        logger.debug("Moving unschedulable pods to active", extra={"event": event, "pods": len(self._unschedulable)})
        for key in self._unschedulable:
            self._queue.add(key)

    def forget(self, key: str) -> None:
        self._unschedulable.discard(key)
        self._queue.forget(key)

    def num_attempts(self, key: str) -> int:
        return self._queue.num_requeues(key)

    def __len__(self) -> int:
        return len(self._queue)

    async def shut_down(self) -> None:
        await self._queue.shut_down()
