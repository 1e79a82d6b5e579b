"""apps/v1 kinds: Deployment and ReplicaSet."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import PodTemplateSpec
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["Deployment", "DeploymentSpec", "DeploymentStatus", "DeploymentStrategy", "DeploymentCondition",
           "ReplicaSet", "ReplicaSetSpec", "ReplicaSetStatus"]


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("apps/v1", kind)
    assert found is not None, kind
    return found


class RollingUpdateDeployment(KubeModel):
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class DeploymentStrategy(KubeModel):
    type: str | None = None
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(KubeModel):
    replicas: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    paused: bool | None = None
    progress_deadline_seconds: int | None = None


class DeploymentCondition(KubeModel):
    type: str
    status: str
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class DeploymentStatus(KubeModel):
    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    conditions: list[DeploymentCondition] | None = None
    collision_count: int | None = None


class Deployment(KubeObject):
    info: ClassVar[ResourceInfo] = _info("Deployment")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DeploymentSpec = Field(default_factory=DeploymentSpec)
    status: DeploymentStatus = Field(default_factory=DeploymentStatus)


class ReplicaSetSpec(KubeModel):
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicaSetStatus(KubeModel):
    replicas: int = 0
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    observed_generation: int | None = None


class ReplicaSet(KubeObject):
    info: ClassVar[ResourceInfo] = _info("ReplicaSet")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = Field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus = Field(default_factory=ReplicaSetStatus)
