"""The Jobs of a CronJob: how one is made from the template, when one has finished, which go.

Mirrors getJobFromTemplate2, getFinishedStatus and removeOldestJobs of
pkg/controller/cronjob. A Job for the run scheduled at `t` is named `<cronjob>-<t in minutes
since the epoch>`, so a run is created at most once whatever the controller's restarts; it
carries the template's labels and annotations plus the scheduled time (RFC 3339, in the
CronJob's time zone) and the CronJob as its controller owner. History keeps the newest
finished Jobs by start time (name breaks ties; Jobs never started count as newest).
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from controllers.common import new_controller_ref
from kube.api import CronJob, Job, ObjectMeta
from kube.api.batch_v1_cronjob import CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION
from kube.api.core_v1 import ObjectReference

__all__ = ["job_name", "job_from_template", "finished_condition", "is_finished", "job_ref", "jobs_to_delete"]


def job_name(cronjob: CronJob, scheduled: datetime) -> str:
    """getJobName: `<cronjob>-<minutes since the epoch of the scheduled time>`."""
    return f"{cronjob.metadata.name}-{int(scheduled.timestamp()) // 60}"


def _rfc3339(t: datetime) -> str:
    text = t.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def job_from_template(cronjob: CronJob, scheduled: datetime, zone: tzinfo) -> Job:
    """The Job to create for the run at `scheduled`."""
    template = cronjob.spec.job_template.model_copy(deep=True)
    annotations = dict(template.metadata.annotations or {})
    annotations[CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION] = _rfc3339(scheduled.astimezone(zone))
    meta = ObjectMeta(name=job_name(cronjob, scheduled), namespace=cronjob.metadata.namespace,
                      labels=dict(template.metadata.labels or {}) or None, annotations=annotations,
                      owner_references=[new_controller_ref(cronjob)])
    return Job(metadata=meta, spec=template.spec)


def finished_condition(job: Job) -> str | None:
    """`Complete` or `Failed` when that condition is true, else None (getFinishedStatus)."""
    for cond in job.status.conditions or []:
        if cond.type in ("Complete", "Failed") and cond.status == "True":
            return cond.type
    return None


def is_finished(job: Job) -> bool:
    return finished_condition(job) is not None


def job_ref(job: Job) -> ObjectReference:
    return ObjectReference(api_version="batch/v1", kind="Job", name=job.metadata.name,
                           namespace=job.metadata.namespace, uid=job.metadata.uid,
                           resource_version=job.metadata.resource_version)


def _start_key(job: Job) -> tuple[int, str, str]:
    start = job.status.start_time
    return (0, start, job.metadata.name or "") if start else (1, "", job.metadata.name or "")


def jobs_to_delete(cronjob: CronJob, jobs: list[Job]) -> list[Job]:
    """The oldest finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit (cleanupFinishedJobs)."""
    doomed: list[Job] = []
    for condition, limit in (("Complete", cronjob.spec.successful_jobs_history_limit),
                             ("Failed", cronjob.spec.failed_jobs_history_limit)):
        if limit is None:
            continue
        finished = sorted((j for j in jobs if finished_condition(j) == condition and
                           j.metadata.deletion_timestamp is None), key=_start_key)
        doomed += finished[:max(0, len(finished) - limit)]
    return doomed
