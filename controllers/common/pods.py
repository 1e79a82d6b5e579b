"""Pod predicates controllers count with: active, ready, available.

Mirrors pkg/controller.IsPodActive and pkg/api/v1/pod.IsPodReady / IsPodAvailable. A pod is
active while it may still run: not terminating (no deletionTimestamp) and not finished
(phase Succeeded or Failed). Ready is the `Ready` condition; available is ready for at
least minReadySeconds, measured from the condition's lastTransitionTime.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from controllers.common.timeutil import parse_time
from kube.api import Pod

__all__ = ["is_pod_active", "is_pod_available", "is_pod_ready", "pod_ready_time"]


def is_pod_active(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is None and pod.status.phase not in ("Succeeded", "Failed")


def is_pod_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def pod_ready_time(pod: Pod) -> datetime | None:
    """When the pod last became Ready, or None if it is not ready (or the time is unknown)."""
    for c in pod.status.conditions or []:
        if c.type == "Ready" and c.status == "True":
            return parse_time(c.last_transition_time)
    return None


def is_pod_available(pod: Pod, min_ready_seconds: int, now: datetime) -> bool:
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = pod_ready_time(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) <= now
