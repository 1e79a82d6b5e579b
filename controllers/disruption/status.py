"""What a PodDisruptionBudget's status should say, from its pods and their expected count.

Mirrors the pure half of pkg/controller/disruption/disruption.go (trySync):
- `desired_healthy`: minAvailable as a number is itself (and the expected count is the
  number of selected pods); a percentage is of the expected count, rounded up;
  maxUnavailable (number or percentage, rounded up) is subtracted from the expected count,
  never below 0;
- `disrupted_pods`: the evictions the API server recorded in `status.disruptedPods` that are
  still pending: the pod exists, is not terminating, and was evicted less than
  DELETION_TIMEOUT ago (an older entry is dropped: the eviction evidently did not delete);
- `current_healthy`: selected pods that are Ready, not terminating and not pending eviction;
- `disruptionsAllowed` = currentHealthy - desiredHealthy, never below 0, and 0 with no
  expected pods; the DisruptionAllowed condition is True (SufficientPods) exactly when it is
  positive, else False (InsufficientPods), its lastTransitionTime kept while unchanged.
All functions are pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kube.api import (
    DISRUPTION_ALLOWED_CONDITION,
    INSUFFICIENT_PODS_REASON,
    SUFFICIENT_PODS_REASON,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetCondition,
    PodDisruptionBudgetStatus,
)
from kube.podutil import is_pod_ready
from kube.timeutil import format_time, parse_time

__all__ = ["DELETION_TIMEOUT", "Budget", "current_healthy", "disrupted_pods", "new_status", "scaled_value",
           "set_disruption_allowed_condition", "status_changed"]

DELETION_TIMEOUT = timedelta(minutes=2)
"""How long an eviction recorded in disruptedPods is trusted to delete its pod."""


@dataclass(frozen=True)
class Budget:
    """The counts a budget's status is computed from."""

    expected_pods: int
    desired_healthy: int
    unmanaged_pods: list[str] = field(default_factory=list)


def scaled_value(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp: a number as is, `N%` of total rounded up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def disrupted_pods(pdb: PodDisruptionBudget, pods: list[Pod], now: datetime) -> tuple[dict[str, str], datetime | None]:
    """The still pending evictions, and when the earliest of them expires (to look again then)."""
    recorded = pdb.status.disrupted_pods or {}
    kept: dict[str, str] = {}
    recheck: datetime | None = None
    for pod in pods:
        name = str(pod.metadata.name)
        if pod.metadata.deletion_timestamp is not None or name not in recorded:
            continue
        evicted = parse_time(recorded[name])
        if evicted is None:
            continue
        expires = evicted + DELETION_TIMEOUT
        if expires < now:
            continue
        kept[name] = recorded[name]
        recheck = expires if recheck is None or expires < recheck else recheck
    return kept, recheck


def current_healthy(pods: list[Pod], disrupted: dict[str, str]) -> int:
    return sum(1 for p in pods if p.metadata.deletion_timestamp is None and str(p.metadata.name) not in disrupted
               and is_pod_ready(p))


def set_disruption_allowed_condition(status: PodDisruptionBudgetStatus, now: datetime) -> None:
    """pdbhelper.UpdateDisruptionAllowedCondition: True with SufficientPods when any disruption is allowed."""
    allowed = status.disruptions_allowed > 0
    wanted = PodDisruptionBudgetCondition(
        type=DISRUPTION_ALLOWED_CONDITION, status="True" if allowed else "False",
        reason=SUFFICIENT_PODS_REASON if allowed else INSUFFICIENT_PODS_REASON, message="",
        observed_generation=status.observed_generation, last_transition_time=format_time(now))
    others = [c for c in status.conditions or [] if c.type != DISRUPTION_ALLOWED_CONDITION]
    old = next((c for c in status.conditions or [] if c.type == DISRUPTION_ALLOWED_CONDITION), None)
    if old is not None and old.status == wanted.status:
        wanted.last_transition_time = old.last_transition_time
    status.conditions = [*others, wanted]


def new_status(pdb: PodDisruptionBudget, *, budget: Budget, healthy: int, disrupted: dict[str, str],
               now: datetime) -> PodDisruptionBudgetStatus:
    allowed = healthy - budget.desired_healthy
    if budget.expected_pods <= 0 or allowed <= 0:
        allowed = 0
    status = PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation, disrupted_pods=disrupted or None, disruptions_allowed=allowed,
        current_healthy=healthy, desired_healthy=budget.desired_healthy, expected_pods=budget.expected_pods,
        conditions=pdb.status.conditions)
    set_disruption_allowed_condition(status, now)
    return status


def status_changed(old: PodDisruptionBudgetStatus, new: PodDisruptionBudgetStatus) -> bool:
    def cond(s: PodDisruptionBudgetStatus) -> list[tuple[str, str, str | None, int | None]]:
        return [(c.type, c.status, c.reason, c.observed_generation) for c in s.conditions or []]
    return (old.current_healthy, old.desired_healthy, old.expected_pods, old.disruptions_allowed,
            old.observed_generation, old.disrupted_pods or {}, cond(old)) != (
        new.current_healthy, new.desired_healthy, new.expected_pods, new.disruptions_allowed,
        new.observed_generation, new.disrupted_pods or {}, cond(new))
