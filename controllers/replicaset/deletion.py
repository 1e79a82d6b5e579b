"""Which pods a ReplicaSet deletes first when it scales down.

Mirrors controller.ActivePodsWithRanks (pkg/controller/controller_utils.go): the pods that
cost least to lose go first. Ordered by, in turn:
1. unscheduled before scheduled (no spec.nodeName);
2. phase Pending before Unknown before Running;
3. not ready before ready;
4. lower `controller.kubernetes.io/pod-deletion-cost` first;
5. pods sharing a node with more of the ReplicaSet's pods first (spread what remains);
6. ready for a shorter time first (no ready time first);
7. more container restarts first;
8. newer first (no creationTimestamp first); the name breaks remaining ties.
Upstream ranks by pods of all ReplicaSets of the same owner; this ranks by the
ReplicaSet's own active pods. Pure functions.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from kube.api import Pod
from kube.podutil import is_pod_ready, pod_ready_time
from kube.timeutil import parse_time

__all__ = ["POD_DELETION_COST_ANNOTATION", "deletion_order", "pods_to_delete"]

POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Pod) -> int:
    try:
        return int((pod.metadata.annotations or {}).get(POD_DELETION_COST_ANNOTATION, "0"))
    except ValueError:
        return 0


def _newer_first(when: datetime | None) -> tuple[int, float]:
    """Sort key: missing time first, then the most recent first."""
    return (0, 0.0) if when is None else (1, -when.timestamp())


def _max_restarts(pod: Pod) -> int:
    return max((c.restart_count for c in pod.status.container_statuses or []), default=0)


def _sort_key(pod: Pod, rank: int) -> tuple[object, ...]:
    ready = is_pod_ready(pod)
    return (
        1 if pod.spec.node_name else 0,
        _PHASE_ORDINAL.get(pod.status.phase or "", 0),
        1 if ready else 0,
        _deletion_cost(pod),
        -rank,
        _newer_first(pod_ready_time(pod)) if ready else (0, 0.0),
        -_max_restarts(pod),
        _newer_first(parse_time(pod.metadata.creation_timestamp)),
        pod.metadata.name or "",
    )


def deletion_order(pods: list[Pod]) -> list[Pod]:
    """`pods` sorted so the best candidates for deletion come first."""
    per_node = Counter(p.spec.node_name for p in pods if p.spec.node_name)
    return sorted(pods, key=lambda p: _sort_key(p, per_node[p.spec.node_name] if p.spec.node_name else 0))


def pods_to_delete(pods: list[Pod], count: int) -> list[Pod]:
    """The `count` pods to delete to scale `pods` down (all of them if count >= len)."""
    return deletion_order(pods)[:max(0, count)]
