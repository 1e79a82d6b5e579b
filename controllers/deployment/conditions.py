"""Deployment conditions: Available and Progressing, set the way upstream sets them.

Mirrors deployment/util's condition helpers and progress.go. `set_condition` changes nothing
when type, status and reason are unchanged (so a steady Deployment is not rewritten every
sync) and keeps lastTransitionTime when only the reason changes. Progressing is special:
real progress (more updated, ready or available replicas, fewer old ones) refreshes its
lastUpdateTime even with the same reason, and that time is what the progress deadline
(spec.progressDeadlineSeconds, default 600) is measured from.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from controllers.deployment.fenceposts import desired_replicas
from kube.api import Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet
from kube.timeutil import format_time, parse_time

__all__ = [
    "AVAILABLE",
    "PROGRESSING",
    "deployment_complete",
    "get_condition",
    "new_condition",
    "progress_deadline_seconds",
    "progress_requeue_after",
    "remove_condition",
    "set_condition",
    "sync_paused_condition",
    "sync_progress",
]

AVAILABLE, PROGRESSING = "Available", "Progressing"
MIN_AVAILABLE, MIN_UNAVAILABLE = "MinimumReplicasAvailable", "MinimumReplicasUnavailable"
NEW_RS_CREATED, FOUND_NEW_RS = "NewReplicaSetCreated", "FoundNewReplicaSet"
RS_UPDATED, NEW_RS_AVAILABLE, TIMED_OUT = "ReplicaSetUpdated", "NewReplicaSetAvailable", "ProgressDeadlineExceeded"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"
DEFAULT_PROGRESS_DEADLINE = 600


def new_condition(type_: str, status: str, reason: str, message: str, *, now: datetime) -> DeploymentCondition:
    stamp = format_time(now)
    return DeploymentCondition(type=type_, status=status, reason=reason, message=message,
                               last_update_time=stamp, last_transition_time=stamp)


def get_condition(status: DeploymentStatus, type_: str) -> DeploymentCondition | None:
    return next((c for c in status.conditions or [] if c.type == type_), None)


def remove_condition(status: DeploymentStatus, type_: str) -> None:
    status.conditions = [c for c in status.conditions or [] if c.type != type_] or None


def set_condition(status: DeploymentStatus, condition: DeploymentCondition) -> None:
    current = get_condition(status, condition.type)
    if current is not None and current.status == condition.status and current.reason == condition.reason:
        return
    if current is not None and current.status == condition.status:
        condition.last_transition_time = current.last_transition_time
    remove_condition(status, condition.type)
    status.conditions = [*(status.conditions or []), condition]


def progress_deadline_seconds(d: Deployment) -> int:
    return d.spec.progress_deadline_seconds if d.spec.progress_deadline_seconds is not None \
        else DEFAULT_PROGRESS_DEADLINE


def deployment_complete(d: Deployment, status: DeploymentStatus) -> bool:
    """Every replica updated and available, and this status describes the current spec."""
    want = desired_replicas(d)
    return (status.updated_replicas == want and status.replicas == want and status.available_replicas == want
            and (status.observed_generation or 0) >= (d.metadata.generation or 0))


def _made_progress(old: DeploymentStatus, new: DeploymentStatus) -> bool:
    old_old = (old.replicas or 0) - (old.updated_replicas or 0)
    new_old = (new.replicas or 0) - (new.updated_replicas or 0)
    return ((new.updated_replicas or 0) > (old.updated_replicas or 0) or new_old < old_old
            or (new.ready_replicas or 0) > (old.ready_replicas or 0)
            or (new.available_replicas or 0) > (old.available_replicas or 0))


def _timed_out(d: Deployment, status: DeploymentStatus, now: datetime) -> bool:
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.reason == NEW_RS_AVAILABLE:
        return False
    if cond.reason == TIMED_OUT:
        return True
    since = parse_time(cond.last_update_time)
    return since is not None and since + timedelta(seconds=progress_deadline_seconds(d)) < now


def sync_paused_condition(d: Deployment, status: DeploymentStatus, *, now: datetime) -> None:
    """Progressing=Unknown DeploymentPaused while paused, DeploymentResumed once resumed."""
    cond = get_condition(status, PROGRESSING)
    if cond is not None and cond.reason == TIMED_OUT:
        return
    paused_shown = cond is not None and cond.reason == PAUSED
    if d.spec.paused and not paused_shown:
        set_condition(status, new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now=now))
    elif not d.spec.paused and paused_shown:
        set_condition(status, new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now=now))


def sync_progress(d: Deployment, status: DeploymentStatus, *, old: DeploymentStatus, new_rs: ReplicaSet | None,
                  now: datetime) -> None:
    """Update Progressing in `status` (computed now) against `old` (the last written status)."""
    current = get_condition(old, PROGRESSING)
    if status.replicas == status.updated_replicas and current is not None and current.reason == NEW_RS_AVAILABLE:
        return  # the last rollout completed and nothing new started
    subject = f'ReplicaSet "{new_rs.metadata.name}"' if new_rs else f'Deployment "{d.metadata.name}"'
    if deployment_complete(d, status):
        set_condition(status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE,
                                            f"{subject} has successfully progressed.", now=now))
    elif _made_progress(old, status):
        cond = new_condition(PROGRESSING, "True", RS_UPDATED, f"{subject} is progressing.", now=now)
        existing = get_condition(status, PROGRESSING)
        if existing is not None and existing.status == "True":
            cond.last_transition_time = existing.last_transition_time
        remove_condition(status, PROGRESSING)
        set_condition(status, cond)
    elif _timed_out(d, status, now):
        set_condition(status, new_condition(PROGRESSING, "False", TIMED_OUT,
                                            f"{subject} has timed out progressing.", now=now))


def progress_requeue_after(d: Deployment, status: DeploymentStatus, *, now: datetime) -> float | None:
    """Seconds until a stalled rollout must be checked against its deadline; None if not needed."""
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.reason in (TIMED_OUT, NEW_RS_AVAILABLE) or deployment_complete(d, status):
        return None
    since = parse_time(cond.last_update_time)
    if since is None:
        return None
    left = (since + timedelta(seconds=progress_deadline_seconds(d)) - now).total_seconds()
    return max(left, 0.0) + 1.0
