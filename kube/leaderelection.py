"""Leader election on a coordination.k8s.io Lease, as client-go's leaderelection package does it.

`LeaderElector.run(work)` blocks until this process holds the Lease, then runs `work()`
while renewing every `retry_period`. Guarantees:
- at most one holder acts at a time, as long as clocks tick at the same rate: a candidate
  takes over only after it has itself watched the Lease go unrenewed for
  `lease_duration` (measured on its own monotonic clock, so wall-clock skew is harmless);
- a leader that cannot renew within `renew_deadline` stops `work` and raises
  LeadershipLost, so the process exits and its supervisor restarts it as a candidate;
- on cancellation (SIGTERM) the leader releases the Lease (empty holder), so a standby
  takes over at its next retry instead of waiting out the duration.
Every write is an update with the read resourceVersion: two candidates racing for a free
Lease cannot both win.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kube.api import Lease
from kube.client import RESTClient
from kube.clock import Clock, RealClock
from kube.errors import AlreadyExists, Conflict, NotFound
from kube.timeutil import now_micro_time

__all__ = ["LeaderElector", "LeadershipLost"]

logger = logging.getLogger(__name__)


class LeadershipLost(Exception):
    """The Lease could not be renewed within the renew deadline."""


class LeaderElector:
    def __init__(self, client: RESTClient, *, namespace: str, name: str, identity: str,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0,
                 clock: Clock | None = None) -> None:
        self.client, self.namespace, self.name, self.identity = client, namespace, name, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.clock = clock or RealClock()
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0

    def _spec(self, lease: Lease | None, *, acquire: bool) -> dict[str, Any]:
        now = now_micro_time()
        old = lease.spec if lease is not None else None
        transitions = (old.lease_transitions or 0) if old is not None else 0
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                "renewTime": now, "acquireTime": (old.acquire_time if old is not None and not acquire else now),
                "leaseTransitions": transitions + (1 if acquire and old is not None and old.holder_identity else 0)}
        return spec

    async def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this process holds the Lease afterwards."""
        try:
            lease = await self.client.get(Lease, self.name, self.namespace)
        except NotFound:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": self._spec(None, acquire=True)}
            try:
                await self.client.create(Lease.model_validate(body))
                return True
            except AlreadyExists:
                return False
        spec = lease.spec
        record = (spec.holder_identity, spec.renew_time)
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

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
        logger.info("Waiting to acquire the leader lease", extra={"lease": f"{self.namespace}/{self.name}",
                                                                  "identity": self.identity})
        while True:
            try:
                if await self.try_acquire_or_renew():
                    break
            except Exception as e:  # an unreachable API server: keep trying
                logger.debug("Acquiring the lease failed", extra={"error": repr(e)})
            await self.clock.sleep(self.retry_period)
        logger.info("Became leader", extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(work())
                tg.create_task(self._renew_loop())
        except* LeadershipLost:
            raise LeadershipLost(f"lost the lease {self.namespace}/{self.name}") from None
        finally:
            await asyncio.shield(self._release())

    async def _renew_loop(self) -> None:
        last_ok = self.clock.now()
        while True:
            await self.clock.sleep(self.retry_period)
            try:
                ok = await self.try_acquire_or_renew()
            except Exception as e:
                logger.warning("Renewing the leader lease failed", extra={"error": repr(e)})
                ok = False
            if ok:
                last_ok = self.clock.now()
            elif self.clock.now() - last_ok > self.renew_deadline:
                logger.error("Leader lease not renewed within the deadline, stepping down")
                raise LeadershipLost()

    async def _release(self) -> None:
        try:
            lease = await self.client.get(Lease, self.name, self.namespace)
            if lease.spec.holder_identity != self.identity:
                return
            spec = {**lease.spec.to_dict(), "holderIdentity": "", "leaseDurationSeconds": 1,
                    "renewTime": now_micro_time()}
            await self.client.update(lease.model_copy(update={"spec": type(lease.spec).model_validate(spec)}))
            logger.info("Released the leader lease")
        except Exception as e:
            logger.debug("Releasing the lease failed", extra={"error": repr(e)})
