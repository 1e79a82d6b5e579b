"""apps/v1 StatefulSet: pods with stable names (NAME-ORDINAL), created and updated in order.

`volumeClaimTemplates` is kept as it came (a list of PersistentVolumeClaim objects); the
StatefulSet controller creates one claim per template and ordinal from it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import PodTemplateSpec
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["RollingUpdateStatefulSetStrategy", "StatefulSet", "StatefulSetCondition", "StatefulSetOrdinals",
           "StatefulSetPersistentVolumeClaimRetentionPolicy", "StatefulSetSpec", "StatefulSetStatus",
           "StatefulSetUpdateStrategy"]



def _info() -> ResourceInfo:
    found = resource_for_kind("apps/v1", "StatefulSet")
    assert found is not None
    return found


class RollingUpdateStatefulSetStrategy(KubeModel):
    partition: int | None = None
    max_unavailable: int | str | None = None


class StatefulSetUpdateStrategy(KubeModel):
    type: str | None = None
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetPersistentVolumeClaimRetentionPolicy(KubeModel):
    when_deleted: str | None = None
    when_scaled: str | None = None


class StatefulSetOrdinals(KubeModel):
    start: int | None = None


class StatefulSetSpec(KubeModel):
    replicas: int | None = None
    selector: LabelSelector = Field(default_factory=LabelSelector)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    volume_claim_templates: list[dict[str, Any]] | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None
    update_strategy: StatefulSetUpdateStrategy | None = None
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetCondition(KubeModel):
    type: str
    status: str
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class StatefulSetStatus(KubeModel):
    observed_generation: int | None = None
    replicas: int = 0
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[StatefulSetCondition] | None = None
    available_replicas: int | None = None


class StatefulSet(KubeObject):
    info: ClassVar[ResourceInfo] = _info()
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = Field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus = Field(default_factory=StatefulSetStatus)
