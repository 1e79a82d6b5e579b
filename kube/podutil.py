"""Pod predicates every component asks: is it finished, is it ready, has it been ready long enough.

Mirrors k8s.io/kubernetes pkg/api/v1/pod (IsPodReady, IsPodAvailable, GetPodReadyCondition)
and the phase checks scattered through the controllers, scheduler and kubelet:
- a pod is terminal once its phase is Succeeded or Failed; a terminal pod never runs again,
  holds no node resources and is not counted as a replica;
- a pod is ready when its `Ready` condition has status "True" (a missing condition is not
  ready);
- a pod is available when it has been ready for at least `min_ready_seconds`, measured from
  the Ready condition's lastTransitionTime; with `min_ready_seconds <= 0` ready is available.
All functions are pure and read only the object they are given.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TypeGuard

from kube.api.core_v1 import Pod, PodCondition
from kube.timeutil import parse_time

__all__ = [
    "TERMINAL_PHASES",
    "get_pod_ready_condition",
    "is_phase_terminal",
    "is_pod_available",
    "is_pod_ready",
    "is_pod_terminal",
    "pod_ready_time",
]

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
"""Pod phases a pod never leaves (PodSucceeded, PodFailed)."""


def is_phase_terminal(phase: str | None) -> TypeGuard[str]:
    """True for Succeeded and Failed; for code that holds only the phase string (pkctl, raw dicts)."""
    return phase in TERMINAL_PHASES


def is_pod_terminal(pod: Pod) -> bool:
    """True once the pod has finished: phase Succeeded or Failed."""
    return is_phase_terminal(pod.status.phase)


def get_pod_ready_condition(pod: Pod) -> PodCondition | None:
    """The pod's `Ready` condition, or None when it has none yet."""
    return pod.status.condition("Ready")


def is_pod_ready(pod: Pod) -> bool:
    """True when the `Ready` condition is "True"."""
    cond = get_pod_ready_condition(pod)
    return cond is not None and cond.status == "True"


def pod_ready_time(pod: Pod) -> datetime | None:
    """When the pod last became Ready; None if it is not ready or the time is missing or malformed."""
    cond = get_pod_ready_condition(pod)
    if cond is None or cond.status != "True":
        return None
    return parse_time(cond.last_transition_time)


def is_pod_available(pod: Pod, *, min_ready_seconds: int, now: datetime) -> bool:
    """True when the pod is ready and has been for at least `min_ready_seconds` at `now`."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = pod_ready_time(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) <= now
