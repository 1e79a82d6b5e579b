"""Job conditions and backoff: the pure parts of the Job controller's status keeping.

Mirrors pkg/controller/job (newCondition, ensureJobConditionStatus, backoff_utils.go):
- `set_condition` adds or updates a condition, keeping lastTransitionTime when the status
  does not change;
- `is_finished` is true once Complete or Failed is true (a finished Job is never touched
  again except to release its pods' finalizers);
- `backoff_delay` is upstream's pod re-creation backoff: `base * 2^(failures-1)` after the
  latest failure, capped at `MAX_BACKOFF`, with failures counted since the last success.
"""

from __future__ import annotations

from kube.api import Job
from kube.api.batch_v1 import JobCondition

__all__ = ["MAX_BACKOFF", "backoff_delay", "condition_true", "is_finished", "set_condition"]

MAX_BACKOFF = 360.0
"""DefaultJobPodFailureBackOff's cap: six minutes."""


def condition_true(job: Job, type_: str) -> bool:
    return any(c.type == type_ and c.status == "True" for c in job.status.conditions or [])


def is_finished(job: Job) -> bool:
    return condition_true(job, "Complete") or condition_true(job, "Failed")


def set_condition(job: Job, *, type_: str, status: str, reason: str, message: str, now: str) -> bool:
    """Add or update one condition in place; True when anything changed."""
    conditions = job.status.conditions = list(job.status.conditions or [])
    for cond in conditions:
        if cond.type != type_:
            continue
        if (cond.status, cond.reason, cond.message) == (status, reason, message):
            return False
        if cond.status != status:
            cond.last_transition_time = now
        cond.status, cond.reason, cond.message, cond.last_probe_time = status, reason, message, now
        return True
    conditions.append(JobCondition(type=type_, status=status, reason=reason, message=message,
                                   last_probe_time=now, last_transition_time=now))
    return True


def backoff_delay(failures: int, *, base: float) -> float:
    """Seconds to wait after the latest of `failures` consecutive failures before creating pods."""
    if failures <= 0:
        return 0.0
    return min(base * 2.0 ** (failures - 1), MAX_BACKOFF)
