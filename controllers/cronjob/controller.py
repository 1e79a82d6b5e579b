"""The CronJob controller: start a Job for each run of a CronJob's schedule, and keep its history.

Mirrors pkg/controller/cronjob/cronjob_controllerv2.go. Informers on CronJobs and Jobs; Jobs
are indexed by their controller's uid. A reconcile reads the CronJob (our own latest status
write when the cache lags behind it) and the Jobs it controls, asks the API server about
active Jobs missing from the cache, lets `plan_sync` decide, then deletes the Jobs a Replace
run supersedes, creates the Job of the run due (an existing Job of that name that the
CronJob controls is adopted into status.active), deletes finished Jobs beyond the history
limits, writes status once if anything changed, and requeues for the next run. A Job's
name is a function of its scheduled time, so a run is started at most once even across
restarts or stale caches. The wall clock is the manager's `now`.
"""

from __future__ import annotations

import asyncio
import logging

from controllers.common import CONTROLLER_UID_INDEX, controller_uid_index
from controllers.context import ControllerContext
from controllers.cronjob.jobs import job_from_template, job_ref, jobs_to_delete
from controllers.cronjob.sync import format_time, plan_sync
from kube.api import CronJob, Job
from kube.api.core_v1 import ObjectReference
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import AlreadyExists, ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.workqueue import WorkQueue

__all__ = ["CronJobController"]

logger = logging.getLogger(__name__)


class CronJobController:
    name = "cronjob"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.now = ctx.now
        self.recorder = EventRecorder(ctx.client, component="cronjob-controller", clock=ctx.clock)
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.written: dict[str, CronJob] = {}  # our latest status write, newer than a lagging cache
        self.cronjob_informer = ctx.informers.informer_for(CronJob)
        self.job_informer = ctx.informers.informer_for(Job)
        self.job_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        self.cronjob_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._on_delete))
        self.job_informer.add_event_handler(EventHandler(
            on_add=self._on_job, on_update=lambda old, new: self._on_job(new), on_delete=self._on_job))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 5, kind="CronJob"))
        finally:
            await self.queue.shut_down()

    def _enqueue(self, cronjob: CronJob) -> None:
        self.queue.add(cronjob.key)

    def _on_delete(self, cronjob: CronJob) -> None:
        self.written.pop(cronjob.key, None)

    def _on_job(self, job: Job) -> None:
        ref = job.metadata.controller_ref()
        if ref is not None and ref.kind == "CronJob":
            self.queue.add(f"{job.metadata.namespace}/{ref.name}")

    def _current(self, key: str, cached: CronJob) -> CronJob:
        written = self.written.get(key)
        if (written is not None and written.metadata.uid == cached.metadata.uid
                and int(written.metadata.resource_version or 0) > int(cached.metadata.resource_version or 0)):
            return written.model_copy(deep=True)
        return cached.model_copy(deep=True)

    async def _missing(self, cronjob: CronJob, jobs: list[Job]) -> set[str]:
        """Uids of active Jobs neither the cache nor the API server has (a slow watch is no proof)."""
        cached = {j.metadata.uid for j in jobs}
        missing: set[str] = set()
        for ref in cronjob.status.active or []:
            if ref.uid in cached:
                continue
            try:
                found = await self.client.get(Job, ref.name or "", ref.namespace or cronjob.metadata.namespace)
            except NotFound:
                missing.add(ref.uid or "")
                continue
            if found.metadata.uid != ref.uid:
                missing.add(ref.uid or "")
        return missing

    async def reconcile(self, req: Request) -> Result | None:
        """Start the run due, if any, and tidy status and history (see the module doc)."""
        cached = self.cronjob_informer.store.get_by_name(req.namespace, req.name)
        if cached is None:
            return None
        cronjob = self._current(req.key, cached)
        jobs = list(self.job_informer.store.by_index(CONTROLLER_UID_INDEX, cronjob.metadata.uid or ""))
        plan = plan_sync(cronjob, jobs, self.now(), missing=await self._missing(cronjob, jobs))
        cronjob = plan.cronjob
        for type_, reason, message in plan.events:
            self.recorder.event(cronjob, type_, reason, message)
        changed = plan.status_changed
        for ref in plan.replace:
            if await self._delete_job(cronjob, ref):
                changed = True
        if plan.create_at is not None and plan.schedule is not None:
            created = await self._create_job(cronjob, job_from_template(cronjob, plan.create_at, plan.schedule.zone))
            if created is not None:
                cronjob.status.active = [*(cronjob.status.active or []), job_ref(created)]
                cronjob.status.last_schedule_time = format_time(plan.create_at)
                changed = True
        for job in jobs_to_delete(cronjob, jobs):
            if await self._delete_job(cronjob, job_ref(job)):
                changed = True
        if changed:
            self.written[req.key] = await self.client.update_status(cronjob)
        return Result(requeue_after=plan.requeue_after) if plan.requeue_after is not None else None

    async def _create_job(self, cronjob: CronJob, job: Job) -> Job | None:
        """Create the run's Job; one of that name already controlled by the CronJob counts as created."""
        try:
            created = await self.client.create(job)
        except AlreadyExists:
            existing = await self.client.get(Job, job.metadata.name or "", job.metadata.namespace)
            ref = existing.metadata.controller_ref()
            if ref is None or ref.uid != cronjob.metadata.uid:
                return None
            if any(r.uid == existing.metadata.uid for r in cronjob.status.active or []):
                return None
            logger.info("Job already exists", extra={"cronjob": cronjob.key, "job": existing.metadata.name})
            return existing
        except ApiError as e:
            self.recorder.event(cronjob, EVENT_WARNING, "FailedCreate", f"Error creating job: {e.message}")
            raise
        self.recorder.event(cronjob, EVENT_NORMAL, "SuccessfulCreate", f"Created job {created.metadata.name}")
        return created

    async def _delete_job(self, cronjob: CronJob, ref: ObjectReference) -> bool:
        """deleteJob: delete in the background, drop it from status.active, say so."""
        try:
            await self.client.delete(Job, ref.name or "", ref.namespace or cronjob.metadata.namespace,
                                     propagation_policy="Background", uid=ref.uid)
        except NotFound:
            pass
        except ApiError as e:
            self.recorder.event(cronjob, EVENT_WARNING, "FailedDelete", f"Deleted job: {e.message}")
            return False
        cronjob.status.active = [r for r in cronjob.status.active or [] if r.uid != ref.uid]
        self.recorder.event(cronjob, EVENT_NORMAL, "SuccessfulDelete", f"Deleted job {ref.name}")
        return True
