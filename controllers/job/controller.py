"""The Job controller: run a Job's pods to completion, counting each finished pod exactly once.

Mirrors pkg/controller/job/job_controller.go. Informers on Jobs and Pods; pods are indexed by
their controller's uid, so a reconcile is a lookup. `reconcile` is level-triggered:
1. a finished Job (Complete or Failed) only has its pods' tracking finalizers released;
2. finished pods still carrying `batch.kubernetes.io/job-tracking` are recorded by uid in
   status.uncountedTerminatedPods (status written), then their finalizer is removed, then
   uids whose pods no longer carry it move into status.succeeded / status.failed (written
   again). A pod is counted only while it holds the finalizer and its uid is not yet
   uncounted, and uids whose finalizer this process removed are remembered until the cache
   agrees, so a pod is never counted twice, whatever crashes or cache lag happen between steps;
3. the Job fails (FailureTarget, then Failed once no pod is active) on backoffLimit
   (BackoffLimitExceeded), activeDeadlineSeconds (DeadlineExceeded) or a FailJob rule of the
   podFailurePolicy (PodFailurePolicy); it completes (SuccessCriteriaMet, then Complete) when
   its completions succeeded (every index for an Indexed Job; any one pod for a work queue);
4. otherwise it keeps min(parallelism, remaining completions) pods active, creating them after
   the failure backoff, or deletes them all while suspended (condition Suspended).
Pods are created with the Job as controller owner, so the garbage collector deletes them with it;
once a Job is gone, whatever pods of it still hold the tracking finalizer are released.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from controllers.common import CONTROLLER_UID_INDEX, controller_uid_index
from controllers.common.batch import gather_failures
from controllers.context import ControllerContext
from controllers.job.indexes import format_indexes, parse_indexes, pending_indexes, pod_index
from controllers.job.pod_control import pod_for_job
from controllers.job.pods import (
    has_tracking_finalizer,
    is_finished,
    is_pod_failed,
    is_pod_succeeded,
    match_failure_policy,
    restarts_on_failure,
)
from controllers.job.status import backoff_delay, condition_true, set_condition
from controllers.job.status import is_finished as job_finished
from controllers.replicaset.expectations import ControllerExpectations
from kube.api import Job, Pod
from kube.api.batch_v1 import (
    JOB_TRACKING_FINALIZER,
    UncountedTerminatedPods,
)
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.timeutil import parse_time
from kube.workqueue import WorkQueue

__all__ = ["JobController"]

logger = logging.getLogger(__name__)


def _ts(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(ts: str | None) -> datetime | None:
    return parse_time(ts) if ts else None


class _Backoff:
    """Failures since the last success, and when the latest was seen (upstream's backoffRecord)."""

    def __init__(self) -> None:
        self.failures = 0
        self.last_failure: float = 0.0


class JobController:
    name = "job"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.clock = ctx.clock
        self.now = ctx.now
        self.backoff_base = ctx.config.job_backoff_base_seconds
        self.recorder = EventRecorder(ctx.client, component="job-controller", clock=ctx.clock)
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.expectations = ControllerExpectations(clock=ctx.clock)
        self.released: dict[str, set[str]] = {}  # job key -> pod uids whose finalizer we removed
        self.backoffs: dict[str, _Backoff] = {}
        self.written: dict[str, Job] = {}  # our latest status write, newer than a lagging cache
        self.job_informer = ctx.informers.informer_for(Job)
        self.pod_informer = ctx.informers.informer_for(Pod)
        self.pod_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        self.job_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._on_job_delete))
        self.pod_informer.add_event_handler(EventHandler(
            on_add=self._on_pod_add, on_update=lambda old, new: self._on_pod(new), on_delete=self._on_pod))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 5, kind="Job"))
        finally:
            await self.queue.shut_down()

    # --- event handlers ----------------------------------------------------------------------
    def _enqueue(self, job: Job) -> None:
        self.queue.add(job.key)

    def _on_job_delete(self, job: Job) -> None:
        for table in (self.released, self.backoffs, self.written):
            table.pop(job.key, None)
        self.expectations.delete_expectations(job.key)
        self.queue.add(job.key)

    def _owner_key(self, pod: Pod) -> str | None:
        ref = pod.metadata.controller_ref()
        return f"{pod.metadata.namespace}/{ref.name}" if ref is not None and ref.kind == "Job" else None

    def _on_pod_add(self, pod: Pod) -> None:
        if (key := self._owner_key(pod)) is not None:
            self.expectations.creation_observed(key)
            self.queue.add(key)

    def _on_pod(self, pod: Pod) -> None:
        if (key := self._owner_key(pod)) is not None:
            self.queue.add(key)

    # --- reconcile ---------------------------------------------------------------------------
    def _current(self, key: str, cached: Job) -> Job:
        written = self.written.get(key)
        if (written is not None and written.metadata.uid == cached.metadata.uid
                and int(written.metadata.resource_version or 0) > int(cached.metadata.resource_version or 0)):
            return written.model_copy(deep=True)
        return cached.model_copy(deep=True)

    async def reconcile(self, req: Request) -> Result | None:
        """Bring one Job's pods and status in line with its spec (see the module doc)."""
        cached = self.job_informer.store.get_by_name(req.namespace, req.name)
        if cached is None:
            await self._release_orphans(req)
            return None
        job = self._current(req.key, cached)
        # Asked before the pods are listed, as upstream does: the writes below yield to the event
        # loop, and adds seen meanwhile may satisfy the expectations while `pods` stays the
        # snapshot taken here; trusting it then would create pods that already exist.
        satisfied = self.expectations.satisfied(req.key)
        pods = list(self.pod_informer.store.by_index(CONTROLLER_UID_INDEX, job.metadata.uid or ""))
        if job_finished(job) or job.metadata.deletion_timestamp is not None:
            await self._release_pods([p for p in pods if has_tracking_finalizer(p)])
            return None
        job = await self._track_finished_pods(job, pods)
        return await self._sync(job, pods, satisfied=satisfied)

    async def _release_orphans(self, req: Request) -> None:
        """The Job is gone: no one will count its pods, so none may keep waiting for that."""
        orphans: list[Pod] = []
        for pod in self.pod_informer.store.by_index("namespace", req.namespace or ""):
            ref = pod.metadata.controller_ref()
            if ref is not None and ref.kind == "Job" and ref.name == req.name and has_tracking_finalizer(pod):
                orphans.append(pod)
        if orphans:
            logger.info("Releasing pods of a deleted Job", extra={"job": req.key, "count": len(orphans)})
            await self._release_pods(orphans)

    async def _write(self, job: Job) -> Job:
        written = await self.client.update_status(job)
        self.written[job.key] = written
        return written.model_copy(deep=True)

    async def _track_finished_pods(self, job: Job, pods: list[Pod]) -> Job:
        """Step 2 of the module doc: record, release, then count finished pods."""
        uncounted = job.status.uncounted_terminated_pods or UncountedTerminatedPods()
        succeeded, failed = list(uncounted.succeeded or []), list(uncounted.failed or [])
        released = self.released.setdefault(job.key, set())
        released &= {p.metadata.uid for p in pods if has_tracking_finalizer(p)}  # the cache caught up
        to_release: list[Pod] = []
        completions = job.spec.completions or 0
        completed = parse_indexes(job.status.completed_indexes, completions)
        backoff = self.backoffs.setdefault(job.key, _Backoff())
        failure_target: str | None = None
        # A pod deleted before it finished counts as failed, unless this controller removed it
        # because the Job was suspended or had already succeeded.
        removed_counts = not job.spec.suspend and not condition_true(job, "SuccessCriteriaMet")
        for pod in pods:
            uid = pod.metadata.uid or ""
            if not has_tracking_finalizer(pod) or uid in released or not is_finished(pod):
                continue
            to_release.append(pod)
            if uid in succeeded or uid in failed:
                continue
            if is_pod_succeeded(pod):
                index = pod_index(pod, completions) if job.spec.completion_mode == "Indexed" else None
                if index is not None:
                    completed.add(index)
                succeeded.append(uid)
                backoff.failures = 0
            elif is_pod_failed(pod) and (pod.status.phase == "Failed" or removed_counts):
                match = match_failure_policy(job, pod)
                if match is not None and match.action == "Ignore":
                    continue
                if match is not None and match.action == "FailJob":
                    failure_target = match.message
                failed.append(uid)
                backoff.failures += 1
                backoff.last_failure = self.clock.now()
        if failure_target is not None:
            set_condition(job, type_="FailureTarget", status="True", reason="PodFailurePolicy",
                          message=failure_target, now=_ts(self.now()))
        new_uncounted = UncountedTerminatedPods(succeeded=succeeded, failed=failed)
        if job.spec.completion_mode == "Indexed":
            job.status.completed_indexes = format_indexes(completed)
        if new_uncounted != uncounted or failure_target is not None:
            job.status.uncounted_terminated_pods = new_uncounted
            job = await self._write(job)
        await self._release_pods(to_release)
        released.update(p.metadata.uid or "" for p in to_release)
        return await self._count(job, {p.metadata.uid for p in pods if has_tracking_finalizer(p)} - released)

    async def _count(self, job: Job, holding: set[str | None]) -> Job:
        """Move uncounted uids whose pods no longer hold the finalizer into succeeded/failed."""
        uncounted = job.status.uncounted_terminated_pods or UncountedTerminatedPods()
        done_s = [u for u in uncounted.succeeded or [] if u not in holding]
        done_f = [u for u in uncounted.failed or [] if u not in holding]
        if not done_s and not done_f:
            return job
        if job.spec.completion_mode == "Indexed":
            job.status.succeeded = len(parse_indexes(job.status.completed_indexes, job.spec.completions or 0))
        else:
            job.status.succeeded = (job.status.succeeded or 0) + len(done_s)
        job.status.failed = (job.status.failed or 0) + len(done_f)
        job.status.uncounted_terminated_pods = UncountedTerminatedPods(
            succeeded=[u for u in uncounted.succeeded or [] if u in holding],
            failed=[u for u in uncounted.failed or [] if u in holding])
        return await self._write(job)

    async def _release_pods(self, pods: list[Pod]) -> None:
        async def release(pod: Pod) -> None:
            finalizers = pod.metadata.finalizers or []
            if JOB_TRACKING_FINALIZER not in finalizers:
                return
            i = finalizers.index(JOB_TRACKING_FINALIZER)
            patch = [{"op": "test", "path": f"/metadata/finalizers/{i}", "value": JOB_TRACKING_FINALIZER},
                     {"op": "remove", "path": f"/metadata/finalizers/{i}"}]
            try:
                await self.client.patch(Pod, pod.metadata.name or "", patch, pod.metadata.namespace,
                                        patch_type="json")
            except NotFound:
                return
        failures = await gather_failures([lambda p=p: release(p) for p in pods])  # type: ignore[misc]
        if failures:
            raise failures[0]

    # --- the spec: finish, suspend, or keep pods running ------------------------------------
    def _active(self, pods: list[Pod]) -> list[Pod]:
        return [p for p in pods if not is_finished(p)]

    def _succeeded(self, job: Job) -> int:
        if job.spec.completion_mode == "Indexed":
            return len(parse_indexes(job.status.completed_indexes, job.spec.completions or 0))
        uncounted = job.status.uncounted_terminated_pods
        return (job.status.succeeded or 0) + len((uncounted.succeeded or []) if uncounted else [])

    def _failed(self, job: Job) -> int:
        uncounted = job.status.uncounted_terminated_pods
        return (job.status.failed or 0) + len((uncounted.failed or []) if uncounted else [])

    def _failure(self, job: Job, active: list[Pod]) -> tuple[str, str] | None:
        if condition_true(job, "FailureTarget"):
            cond = next(c for c in job.status.conditions or [] if c.type == "FailureTarget")
            return cond.reason or "", cond.message or ""
        if self._failed(job) + restarts_on_failure(job, active) > (
                job.spec.backoff_limit if job.spec.backoff_limit is not None else 6):
            return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        start = _parse(job.status.start_time)
        deadline = job.spec.active_deadline_seconds
        if deadline is not None and start is not None and (self.now() - start).total_seconds() >= deadline:
            return "DeadlineExceeded", "Job was active longer than specified deadline"
        return None

    def _complete(self, job: Job, active: int) -> bool:
        succeeded = self._succeeded(job)
        if job.spec.completions is None:
            return succeeded > 0 and active == 0
        return succeeded >= job.spec.completions

    async def _sync(self, job: Job, pods: list[Pod], *, satisfied: bool) -> Result | None:
        now = _ts(self.now())
        active = self._active(pods)
        changed = False
        if job.status.start_time is None and not job.spec.suspend:
            job.status.start_time, changed = now, True
        if (failure := self._failure(job, active)) is not None:
            return await self._finish(job, active, failure, success=False)
        if self._complete(job, len(active)):
            return await self._finish(job, active, ("CompletionsReached", "Reached expected number of succeeded pods"),
                                      success=True)
        requeue: float | None = None
        if job.spec.suspend:
            await self._delete_pods(job, active)
            active = []
            if set_condition(job, type_="Suspended", status="True", reason="JobSuspended", message="Job suspended",
                             now=now):
                changed = True
                self.recorder.event(job, EVENT_NORMAL, "Suspended", "Job suspended")
        else:
            if condition_true(job, "Suspended"):
                changed |= set_condition(job, type_="Suspended", status="False", reason="JobResumed",
                                         message="Job resumed", now=now)
                job.status.start_time = now  # a resumed Job's deadline starts again
                self.recorder.event(job, EVENT_NORMAL, "Resumed", "Job resumed")
            if satisfied:
                requeue = await self._manage(job, active)
            requeue = self._deadline_requeue(job, requeue)
        ready = sum(1 for p in active if any(c.type == "Ready" and c.status == "True"
                                             for c in p.status.conditions or []))
        terminating = sum(1 for p in pods if p.metadata.deletion_timestamp is not None
                          and p.status.phase not in ("Succeeded", "Failed"))
        if (job.status.active, job.status.ready, job.status.terminating) != (len(active), ready, terminating):
            job.status.active, job.status.ready, job.status.terminating, changed = len(active), ready, terminating, True
        if changed:
            await self._write(job)
        return Result(requeue_after=requeue) if requeue is not None else None

    def _deadline_requeue(self, job: Job, requeue: float | None) -> float | None:
        start, deadline = _parse(job.status.start_time), job.spec.active_deadline_seconds
        if start is None or deadline is None:
            return requeue
        left = max(0.1, deadline - (self.now() - start).total_seconds())
        return left if requeue is None else min(requeue, left)

    async def _finish(self, job: Job, active: list[Pod], why: tuple[str, str], *, success: bool) -> Result | None:
        reason, message = why
        now = _ts(self.now())
        target = "SuccessCriteriaMet" if success else "FailureTarget"
        changed = set_condition(job, type_=target, status="True", reason=reason, message=message, now=now)
        if changed:
            job = await self._write(job)
        if active:
            await self._delete_pods(job, active)
            return Result(requeue_after=1.0)
        uncounted = job.status.uncounted_terminated_pods or UncountedTerminatedPods()
        if uncounted.succeeded or uncounted.failed:
            return Result(requeue_after=1.0)  # finish counting before the final condition
        final = "Complete" if success else "Failed"
        set_condition(job, type_=final, status="True", reason=reason, message=message, now=now)
        if success:
            job.status.completion_time = now
        job.status.active = 0
        await self._write(job)
        if success:
            self.recorder.event(job, EVENT_NORMAL, "Completed", "Job completed")
        else:
            self.recorder.event(job, EVENT_WARNING, reason, message)
        return None

    async def _manage(self, job: Job, active: list[Pod]) -> float | None:
        parallelism = job.spec.parallelism if job.spec.parallelism is not None else 1
        succeeded = self._succeeded(job)
        if job.spec.completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = min(parallelism, max(0, job.spec.completions - succeeded))
        if len(active) > want:
            victims = sorted(active, key=lambda p: p.metadata.creation_timestamp or "", reverse=True)
            await self._delete_pods(job, victims[:len(active) - want])
            return None
        if len(active) == want:
            return None
        backoff = self.backoffs.setdefault(job.key, _Backoff())
        wait = backoff_delay(backoff.failures, base=self.backoff_base) - (self.clock.now() - backoff.last_failure)
        if backoff.failures and wait > 0:
            return wait
        indexes: list[int | None] = [None] * (want - len(active))
        if job.spec.completion_mode == "Indexed":
            completions = job.spec.completions or 0
            held = {i for p in active if (i := pod_index(p, completions)) is not None}
            completed = parse_indexes(job.status.completed_indexes, completions)
            indexes = list(pending_indexes(completions=completions, completed=completed, active=held,
                                           count=want - len(active)))
        await self._create_pods(job, indexes)
        return None

    async def _create_pods(self, job: Job, indexes: list[int | None]) -> None:
        if not indexes:
            return
        self.expectations.expect_creations(job.key, len(indexes))
        failures = await gather_failures([lambda i=i: self._create_pod(job, i) for i in indexes])  # type: ignore[misc]
        for _ in failures:
            self.expectations.creation_observed(job.key)
        if failures:
            raise failures[0]

    async def _create_pod(self, job: Job, index: int | None) -> None:
        pod = pod_for_job(job, index)
        try:
            created = await self.client.create(pod)
        except ApiError as e:
            self.recorder.event(job, EVENT_WARNING, "FailedCreate", f"Error creating: {e.message}")
            raise
        self.recorder.event(job, EVENT_NORMAL, "SuccessfulCreate", f"Created pod: {created.metadata.name}")

    async def _delete_pods(self, job: Job, pods: list[Pod]) -> None:
        async def delete(pod: Pod) -> None:
            try:
                await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace, uid=pod.metadata.uid)
            except NotFound:
                return
            self.recorder.event(job, EVENT_NORMAL, "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")
        failures = await gather_failures([lambda p=p: delete(p) for p in pods])  # type: ignore[misc]
        if failures:
            raise failures[0]

