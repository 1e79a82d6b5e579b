"""core/v1 ReplicationController: the ReplicaSet's predecessor, with an equality-based selector.

Its spec and status carry the same fields as a ReplicaSet's, except that `spec.selector` is a
plain label map (every pair must match) rather than a LabelSelector.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import PodTemplateSpec
from kube.api.meta import ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["ReplicationController", "ReplicationControllerCondition", "ReplicationControllerSpec",
           "ReplicationControllerStatus"]



def _info() -> ResourceInfo:
    found = resource_for_kind("v1", "ReplicationController")
    assert found is not None
    return found


class ReplicationControllerSpec(KubeModel):
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: dict[str, str] | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicationControllerCondition(KubeModel):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class ReplicationControllerStatus(KubeModel):
    replicas: int = 0
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[ReplicationControllerCondition] | None = None


class ReplicationController(KubeObject):
    info: ClassVar[ResourceInfo] = _info()
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = Field(default_factory=ReplicationControllerSpec)
    status: ReplicationControllerStatus = Field(default_factory=ReplicationControllerStatus)
