"""The TTL-after-finished controller: delete finished Jobs once spec.ttlSecondsAfterFinished passed.

Mirrors pkg/controller/ttlafterfinished/ttlafterfinished_controller.go. A Job is finished when
its Complete or Failed condition is true; it expires `ttlSecondsAfterFinished` after that
condition's lastTransitionTime. Before deleting, the Job is read fresh from the API server
(the TTL may have been changed or removed meanwhile), and the delete carries the Job's uid as
a precondition and propagationPolicy Foreground, so the garbage collector removes its pods
first. Jobs not yet expired are requeued for when they are.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from controllers.context import ControllerContext
from kube.api import Job
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import NotFound
from kube.timeutil import parse_time
from kube.workqueue import WorkQueue

__all__ = ["TTLAfterFinishedController", "expires_in"]

logger = logging.getLogger(__name__)


def _finished_at(job: Job) -> datetime | None:
    for cond in job.status.conditions or []:
        if cond.type in ("Complete", "Failed") and cond.status == "True":
            return parse_time(cond.last_transition_time) if cond.last_transition_time else None
    return None


def expires_in(job: Job, now: datetime) -> float | None:
    """Seconds until the Job may be deleted (<= 0: now), or None when it has no TTL or is not finished."""
    ttl = job.spec.ttl_seconds_after_finished
    finished = _finished_at(job)
    if ttl is None or finished is None or job.metadata.deletion_timestamp is not None:
        return None
    return ttl - (now - finished).total_seconds()


class TTLAfterFinishedController:
    name = "ttl-after-finished"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.now = ctx.now
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.informer = ctx.informers.informer_for(Job)
        self.informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=lambda job: None))

    def _enqueue(self, job: Job) -> None:
        if job.spec.ttl_seconds_after_finished is not None and _finished_at(job) is not None:
            self.queue.add(job.key)

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 5, kind="Job"))
        finally:
            await self.queue.shut_down()

    async def reconcile(self, req: Request) -> Result | None:
        """Delete the Job if its TTL after finishing has passed; else come back when it will have."""
        cached = self.informer.store.get_by_name(req.namespace, req.name)
        if cached is None or (left := expires_in(cached, self.now())) is None:
            return None
        if left > 0:
            return Result(requeue_after=left)
        try:
            fresh = await self.client.get(Job, req.name, req.namespace)
        except NotFound:
            return None
        left = expires_in(fresh, self.now())
        if left is None:
            return None
        if left > 0:
            return Result(requeue_after=left)
        logger.info("Cleaning up finished Job", extra={"job": req.key})
        try:
            await self.client.delete(Job, req.name, req.namespace, propagation_policy="Foreground",
                                     uid=fresh.metadata.uid)
        except NotFound:
            return None
        return None
