"""policy/v1 PodDisruptionBudget: how many of a set of pods must stay up through voluntary disruptions.

The spec names the pods (`selector`) and the budget, either `minAvailable` or `maxUnavailable`
(a number or a percentage, never both). The disruption controller writes the status; the
Eviction API reads it and spends `disruptionsAllowed` one eviction at a time, recording each
evicted pod in `disruptedPods` until the controller sees it go.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = ["DISRUPTION_ALLOWED_CONDITION", "INSUFFICIENT_PODS_REASON", "SUFFICIENT_PODS_REASON",
           "SYNC_FAILED_REASON", "PodDisruptionBudget", "PodDisruptionBudgetCondition", "PodDisruptionBudgetSpec",
           "PodDisruptionBudgetStatus"]

_FOUND = resource_for_kind("policy/v1", "PodDisruptionBudget")
assert _FOUND is not None
_PDB: ResourceInfo = _FOUND

DISRUPTION_ALLOWED_CONDITION = "DisruptionAllowed"
SUFFICIENT_PODS_REASON = "SufficientPods"
INSUFFICIENT_PODS_REASON = "InsufficientPods"
SYNC_FAILED_REASON = "SyncFailed"


class PodDisruptionBudgetSpec(KubeModel):
    min_available: int | str | None = None
    selector: LabelSelector | None = None
    max_unavailable: int | str | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetCondition(KubeModel):
    """A metav1.Condition."""

    type: str
    status: str
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class PodDisruptionBudgetStatus(KubeModel):
    observed_generation: int | None = None
    disrupted_pods: dict[str, str] | None = None
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    conditions: list[PodDisruptionBudgetCondition] | None = None


class PodDisruptionBudget(KubeObject):
    info: ClassVar[ResourceInfo] = _PDB
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = Field(default_factory=PodDisruptionBudgetStatus)
