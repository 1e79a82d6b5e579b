"""One CronJob's decision, free of I/O: what to record, create, delete, and when to look again.

Mirrors syncCronJob of pkg/controller/cronjob/cronjob_controllerv2.go. Given the CronJob, the
Jobs it controls (from the cache) and the time, `plan_sync`:
1. drops finished Jobs from status.active (event SawCompletedJob), advances
   status.lastSuccessfulTime to the latest completion, warns of unfinished Jobs it controls
   but does not list (UnexpectedJob), and drops active references whose Job is gone
   (`missing`: the caller has checked with the API server; event MissingJob);
2. unless the CronJob is being deleted, is suspended or its schedule or time zone does not
   load, finds the run due now: none (requeue for the next), too late for
   startingDeadlineSeconds (MissSchedule), already started (its Job is active or it is
   lastScheduleTime), blocked by a running Job under Forbid (JobAlreadyActive), or to start,
   replacing the running Jobs under Replace. More than 100 missed runs also warns
   TooManyMissedTimes.
The caller creates and deletes Jobs, then writes status if `status_changed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from controllers.cronjob.jobs import finished_condition, job_name
from kube.api import CronJob, Job
from kube.api.core_v1 import ObjectReference
from kube.cron.schedule import (
    Missed,
    Schedule,
    ScheduleError,
    load_time_zone,
    next_schedule_delay,
    next_schedule_time,
    parse_schedule,
)
from kube.events import EVENT_NORMAL, EVENT_WARNING
from kube.timeutil import parse_time

__all__ = ["SyncPlan", "plan_sync", "format_time"]


@dataclass
class SyncPlan:
    cronjob: CronJob
    """The CronJob with the status this sync computed (active list, last times)."""
    status_changed: bool = False
    create_at: datetime | None = None
    """The scheduled time of the run to start now, if any."""
    replace: list[ObjectReference] = field(default_factory=list)
    """Active Jobs to delete before starting the run (concurrencyPolicy Replace)."""
    events: list[tuple[str, str, str]] = field(default_factory=list)
    """(type, reason, message) to record on the CronJob."""
    requeue_after: float | None = None
    schedule: Schedule | None = None


def format_time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rfc1123z(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def _time(ts: str | None) -> datetime | None:
    return parse_time(ts) if ts else None


def _track_jobs(plan: SyncPlan, jobs: list[Job], missing: set[str]) -> None:
    status = plan.cronjob.status
    active = {ref.uid for ref in status.active or []}
    children = {j.metadata.uid for j in jobs}
    for job in jobs:
        condition = finished_condition(job)
        if job.metadata.uid not in active and condition is None:
            plan.events.append((EVENT_WARNING, "UnexpectedJob",
                                f"Saw a job that the controller did not create or forgot: {job.metadata.name}"))
        elif job.metadata.uid in active and condition is not None:
            status.active = [r for r in status.active or [] if r.uid != job.metadata.uid]
            plan.events.append((EVENT_NORMAL, "SawCompletedJob",
                                f"Saw completed job: {job.metadata.name}, condition: {condition}"))
            plan.status_changed = True
        if condition == "Complete" and (done := _time(job.status.completion_time)) is not None:
            last = _time(status.last_successful_time)
            if last is None or done > last:
                status.last_successful_time = format_time(done)
                plan.status_changed = True
    for ref in list(status.active or []):
        if ref.uid not in children and ref.uid in missing:
            plan.events.append((EVENT_NORMAL, "MissingJob", f"Active job went missing: {ref.name}"))
            status.active = [r for r in status.active or [] if r.uid != ref.uid]
            plan.status_changed = True


def plan_sync(cronjob: CronJob, jobs: list[Job], now: datetime, *, missing: set[str] | None = None) -> SyncPlan:
    """Decide one sync of `cronjob` (see the module doc); `missing`: uids of active Jobs the API server lacks."""
    plan = SyncPlan(cronjob=cronjob.model_copy(deep=True))
    cj, spec = plan.cronjob, plan.cronjob.spec
    _track_jobs(plan, jobs, missing or set())
    if cj.metadata.deletion_timestamp is not None:
        return plan
    try:
        load_time_zone(spec.time_zone)
    except ScheduleError as exc:
        plan.events.append((EVENT_WARNING, "UnknownTimeZone", f'invalid timeZone: "{spec.time_zone}": {exc}'))
        return plan
    if spec.suspend:
        return plan
    try:
        schedule = parse_schedule(spec.schedule, spec.time_zone)
    except ScheduleError as exc:
        plan.events.append((EVENT_WARNING, "UnparseableSchedule", f'unparseable schedule: "{spec.schedule}" : {exc}'))
        return plan
    plan.schedule = schedule
    earliest = _time(cj.status.last_schedule_time) or _time(cj.metadata.creation_timestamp) or now
    try:
        scheduled, missed = next_schedule_time(schedule, earliest=earliest, now=now,
                                               starting_deadline_seconds=spec.starting_deadline_seconds)
    except ScheduleError as exc:
        plan.events.append((EVENT_WARNING, "InvalidSchedule", f"invalid schedule: {spec.schedule} : {exc}"))
        return plan
    if missed is Missed.MANY and scheduled is not None:
        plan.events.append((EVENT_WARNING, "TooManyMissedTimes", "too many missed start times. Set or decrease "
                            ".spec.startingDeadlineSeconds or check clock skew"))
    plan.requeue_after = next_schedule_delay(schedule, earliest=earliest, now=now)
    if scheduled is None:
        return plan
    deadline = spec.starting_deadline_seconds
    if deadline is not None and (now - scheduled).total_seconds() > deadline:
        plan.events.append((EVENT_WARNING, "MissSchedule",
                            f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}"))
        return plan
    name = job_name(cj, scheduled)
    if any(r.name == name for r in cj.status.active or []) or _time(cj.status.last_schedule_time) == scheduled:
        return plan
    if spec.concurrency_policy == "Forbid" and cj.status.active:
        plan.events.append((EVENT_NORMAL, "JobAlreadyActive",
                            "Not starting job because prior execution is running and concurrency policy is Forbid"))
        return plan
    if spec.concurrency_policy == "Replace":
        plan.replace = list(cj.status.active or [])
    plan.create_at = scheduled
    return plan
