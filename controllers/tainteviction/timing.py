"""When a pod on a node with NoExecute taints must go: the one rule, shared by every caller.

Mirrors the taint eviction manager's timing (pkg/controller/tainteviction,
getMinTolerationTime), counted from each taint's `timeAdded` so that the answer survives a
restart of the controller-manager:
- a pod that does not tolerate one of the node's NoExecute taints must go at once;
- a pod that tolerates every one of them stays until the earliest of, for each taint, the
  taint's start plus the smallest `tolerationSeconds` of the tolerations matching it;
- tolerations without a limit keep it forever (as far as that taint goes).
Tolerations match as the scheduler matches them (`kube.taints`). All functions are pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kube.api import Pod, Taint
from kube.taints import toleration_seconds

__all__ = ["eviction_time", "no_execute_taints", "tolerates_for_now"]


def no_execute_taints(taints: list[Taint] | None) -> list[Taint]:
    return [t for t in taints or [] if t.effect == "NoExecute"]


def eviction_time(pod: Pod, taints: list[Taint], *, since: Callable[[Taint], float]) -> float | None:
    """When (epoch seconds) the pod must be deleted; None when never; -inf when at once.

    `since(taint)` is when the taint was put on the node (its timeAdded, or when first seen).
    """
    deadline = math.inf
    for taint in no_execute_taints(taints):
        seconds = toleration_seconds(pod.spec.tolerations, taint)
        if seconds is None:
            return -math.inf
        deadline = min(deadline, since(taint) + seconds)
    return None if deadline == math.inf else deadline


def tolerates_for_now(pod: Pod, taint: Taint, *, since: float, now: float) -> bool:
    """True while `pod` may stay on a node that has carried the NoExecute `taint` since `since`."""
    when = eviction_time(pod, [taint], since=lambda _t: since)
    return when is None or now < when
