"""Leader election on a coordination.k8s.io Lease, as client-go's leaderelection package does it.

`LeaderElector.run(work)` blocks until this process holds the Lease, then runs `work()`
while renewing every `retry_period`. Guarantees:
- at most one holder acts at a time, as long as clocks tick at the same rate: a candidate
  takes over only after it has itself watched the Lease go unrenewed for
  `lease_duration` (measured on its own monotonic clock, so wall-clock skew is harmless),
  while a leader stops `work` no later than `renew_deadline` after the start of its last
  successful renewal. Every attempt (acquire or renew) is cut off when that deadline
  passes, so a slow or hanging API server cannot keep a leader acting past it; the
  durations are checked to keep this ordering (lease_duration > renew_deadline >
  JITTER_FACTOR * retry_period), as client-go's NewLeaderElector checks them;
- a leader that cannot renew within `renew_deadline` stops `work` and raises
  LeadershipLost, so the process exits and its supervisor restarts it as a candidate;
- on the way out (cancellation, SIGTERM, or a lost lease) the leader releases the Lease
  (empty holder) if it still holds it, so a standby takes over at its next retry instead of
  waiting out the duration; the release is bounded by `renew_deadline`, so a dead API
  server cannot hold up shutdown.
Every write is an update with the read resourceVersion: two candidates racing for a free
Lease cannot both win.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine
from typing import Any

from kube.api import Lease
from kube.client import RESTClient
from kube.clock import Clock, RealClock
from kube.errors import AlreadyExists, Conflict, NotFound
from kube.timeutil import now_micro_time

__all__ = ["JITTER_FACTOR", "LeaderElector", "LeadershipLost"]

logger = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
"""client-go's JitterFactor: the renew deadline must leave room for a jittered retry period."""


class LeadershipLost(Exception):
    """The Lease could not be renewed within the renew deadline."""


def _check_durations(*, lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """Raise ValueError unless lease_duration > renew_deadline > JITTER_FACTOR * retry_period > 0."""
    for name, value in (("lease_duration", lease_duration), ("renew_deadline", renew_deadline),
                        ("retry_period", retry_period)):
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero, got {value}")
    if lease_duration <= renew_deadline:
        raise ValueError(f"lease_duration ({lease_duration}s) must be greater than renew_deadline "
                         f"({renew_deadline}s)")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(f"renew_deadline ({renew_deadline}s) must be greater than retry_period * {JITTER_FACTOR} "
                         f"({retry_period}s * {JITTER_FACTOR})")


class LeaderElector:
    """Elects one leader among the processes sharing `namespace/name`; one elector per process."""

    def __init__(self, client: RESTClient, *, namespace: str, name: str, identity: str,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 clock: Clock | None = None) -> None:
        """Raise ValueError when the durations cannot keep two leaders apart (see the module doc)."""
        _check_durations(lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period)
        self.client, self.namespace, self.name, self.identity = client, namespace, name, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.clock = clock or RealClock()
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0

    @property
    def _lease(self) -> str:
        return f"{self.namespace}/{self.name}"

    def _spec(self, lease: Lease | None, *, acquire: bool) -> dict[str, Any]:
        now = now_micro_time()
        old = lease.spec if lease is not None else None
        transitions = (old.lease_transitions or 0) if old is not None else 0
        # Round up: the wire field is whole seconds and must never understate our duration.
        return {"holderIdentity": self.identity, "leaseDurationSeconds": max(1, math.ceil(self.lease_duration)),
                "renewTime": now, "acquireTime": (old.acquire_time if old is not None and not acquire else now),
                "leaseTransitions": transitions + (1 if acquire and old is not None and old.holder_identity else 0)}

    async def try_acquire_or_renew(self) -> bool:
        """One unbounded attempt; True when this process holds the Lease afterwards."""
        try:
            lease = await self.client.get(Lease, self.name, self.namespace)
        except NotFound:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": self._spec(None, acquire=True)}
            try:
                await self.client.create(Lease.model_validate(body))
            except AlreadyExists:
                return False
            return True
        spec = lease.spec
        record = (spec.holder_identity, spec.renew_time, lease.metadata.resource_version)
        now = self.clock.now()
        if record != self._observed:
            self._observed, self._observed_at = record, now
        mine = spec.holder_identity == self.identity
        duration = float(spec.lease_duration_seconds or self.lease_duration)
        if not mine and spec.holder_identity and now - self._observed_at < duration:
            return False  # someone else holds it and renewed it recently enough
        updated = lease.model_copy(update={"spec": type(spec).model_validate(self._spec(lease, acquire=not mine))})
        try:
            await self.client.update(updated)
        except Conflict:
            return False
        return True

    async def _attempt(self, budget: float) -> bool:
        """`try_acquire_or_renew` cut off after `budget` seconds; any failure counts as False."""
        try:
            async with self.clock.timeout(budget):
                return await self.try_acquire_or_renew()
        except TimeoutError:
            logger.warning("Leader lease attempt timed out", extra={"lease": self._lease, "budget": round(budget, 3)})
        except Exception as e:  # noqa: BLE001 - an unreachable API server: the loop retries
            logger.warning("Leader lease attempt failed", extra={"lease": self._lease, "error": repr(e)})
        return False

    async def run(self, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Wait for the Lease, then run `work` until cancelled; raise LeadershipLost if renewal fails."""
        logger.info("Waiting to acquire the leader lease", extra={"lease": self._lease, "identity": self.identity})
        while True:
            started = self.clock.now()
            if await self._attempt(self.renew_deadline):
                break
            await self.clock.sleep(self.retry_period)
        logger.info("Became leader", extra={"lease": self._lease, "identity": self.identity})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(work())
                tg.create_task(self._renew_loop(last_renewed=started))
        except* LeadershipLost:
            raise LeadershipLost(f"lost the lease {self._lease}") from None
        finally:
            await asyncio.shield(self._release())

    async def _renew_loop(self, *, last_renewed: float) -> None:
        """Renew every retry_period; raise LeadershipLost once renew_deadline has passed since `last_renewed`.

        `last_renewed` is when the last successful attempt *started*: the write may have
        landed any time after that, so only then is it certain others measure from later.
        """
        while True:
            deadline = last_renewed + self.renew_deadline
            await self.clock.sleep(min(self.retry_period, deadline - self.clock.now()))
            started = self.clock.now()
            if started >= deadline:
                logger.error("Leader lease not renewed within the deadline, stepping down",
                             extra={"lease": self._lease, "identity": self.identity})
                raise LeadershipLost()
            if await self._attempt(deadline - started):
                last_renewed = started

    async def _release(self) -> None:
        """Give the Lease up if this process still holds it; best effort, bounded by renew_deadline."""
        try:
            async with self.clock.timeout(self.renew_deadline):
                lease = await self.client.get(Lease, self.name, self.namespace)
                if lease.spec.holder_identity != self.identity:
                    return
                spec = {**lease.spec.to_dict(), "holderIdentity": "", "leaseDurationSeconds": 1,
                        "renewTime": now_micro_time()}
                await self.client.update(lease.model_copy(update={"spec": type(lease.spec).model_validate(spec)}))
            logger.info("Released the leader lease", extra={"lease": self._lease})
        except Exception as e:  # noqa: BLE001 - best effort: the Lease expires anyway
            logger.debug("Releasing the lease failed", extra={"lease": self._lease, "error": repr(e)})
