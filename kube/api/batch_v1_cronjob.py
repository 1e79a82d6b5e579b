"""batch/v1 CronJob: a Job made on a cron schedule.

The fields follow k8s.io/api/batch/v1 (CronJobSpec, JobTemplateSpec, CronJobStatus). The
annotation the CronJob controller puts on each Job it makes (its scheduled time) and the one
`kubectl create job --from=cronjob/...` puts on a manual run are spelled here once.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.batch_v1 import JobSpec
from kube.api.core_v1 import ObjectReference
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["CronJob", "CronJobSpec", "CronJobStatus", "JobTemplateSpec", "CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION",
           "CRONJOB_INSTANTIATE_ANNOTATION", "CONCURRENCY_POLICIES"]

CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
CRONJOB_INSTANTIATE_ANNOTATION = "cronjob.kubernetes.io/instantiate"
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")


def _info() -> ResourceInfo:
    found = resource_for_kind("batch/v1", "CronJob")
    assert found is not None
    return found


class JobTemplateSpec(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(KubeModel):
    schedule: str = ""
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec = Field(default_factory=JobTemplateSpec)
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


class CronJobStatus(KubeModel):
    active: list[ObjectReference] | None = None
    last_schedule_time: str | None = None
    last_successful_time: str | None = None


class CronJob(KubeObject):
    info: ClassVar[ResourceInfo] = _info()
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: CronJobSpec = Field(default_factory=CronJobSpec)
    status: CronJobStatus = Field(default_factory=CronJobStatus)
