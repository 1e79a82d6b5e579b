"""apps/v1 kinds: DaemonSet and ControllerRevision.

A DaemonSet runs one copy of its pod template on every eligible node; its history is kept
in ControllerRevisions, immutable snapshots (`data`: a patch holding the template) numbered
by `revision`, which `kubectl rollout history|undo` read. Field names follow k8s.io/api
apps/v1; `data` stays raw JSON because its shape belongs to the owning controller.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import PodTemplateSpec
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["ControllerRevision", "DaemonSet", "DaemonSetCondition", "DaemonSetSpec", "DaemonSetStatus",
           "DaemonSetUpdateStrategy", "RollingUpdateDaemonSet"]


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("apps/v1", kind)
    assert found is not None, kind
    return found


class RollingUpdateDaemonSet(KubeModel):
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class DaemonSetUpdateStrategy(KubeModel):
    type: str | None = None
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(KubeModel):
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    update_strategy: DaemonSetUpdateStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


class DaemonSetCondition(KubeModel):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class DaemonSetStatus(KubeModel):
    current_number_scheduled: int = 0
    number_misscheduled: int = 0
    desired_number_scheduled: int = 0
    number_ready: int = 0
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[DaemonSetCondition] | None = None


class DaemonSet(KubeObject):
    info: ClassVar[ResourceInfo] = _info("DaemonSet")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DaemonSetSpec = Field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus = Field(default_factory=DaemonSetStatus)


class ControllerRevision(KubeObject):
    info: ClassVar[ResourceInfo] = _info("ControllerRevision")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    data: dict[str, Any] | None = None
    revision: int = 0
