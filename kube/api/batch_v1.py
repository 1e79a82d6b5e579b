"""batch/v1 kinds: Job, a set of pods that run to completion.

The fields follow k8s.io/api/batch/v1 (JobSpec, JobStatus, PodFailurePolicy). The label,
annotation and finalizer names the API server and the Job controller agree on live here too,
so both sides spell them once.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import PodTemplateSpec
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["Job", "JobSpec", "JobStatus", "JobCondition", "PodFailurePolicy", "PodFailurePolicyRule",
           "PodFailurePolicyOnExitCodesRequirement", "PodFailurePolicyOnPodConditionsPattern",
           "UncountedTerminatedPods", "CONTROLLER_UID_LABEL", "LEGACY_CONTROLLER_UID_LABEL", "JOB_NAME_LABEL",
           "LEGACY_JOB_NAME_LABEL", "JOB_COMPLETION_INDEX_ANNOTATION", "JOB_TRACKING_FINALIZER",
           "JOB_INDEX_ENV"]

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
JOB_INDEX_ENV = "JOB_COMPLETION_INDEX"


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("batch/v1", kind)
    assert found is not None, kind
    return found


class PodFailurePolicyOnExitCodesRequirement(KubeModel):
    container_name: str | None = None
    operator: str
    values: list[int] = Field(default_factory=list)


class PodFailurePolicyOnPodConditionsPattern(KubeModel):
    type: str
    status: str | None = None


class PodFailurePolicyRule(KubeModel):
    action: str
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


class PodFailurePolicy(KubeModel):
    rules: list[PodFailurePolicyRule] = Field(default_factory=list)


class JobSpec(KubeModel):
    parallelism: int | None = None
    completions: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    backoff_limit: int | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    pod_replacement_policy: str | None = None


class JobCondition(KubeModel):
    type: str
    status: str
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class UncountedTerminatedPods(KubeModel):
    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(KubeModel):
    conditions: list[JobCondition] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    completed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: int | None = None


class Job(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Job")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus = Field(default_factory=JobStatus)
