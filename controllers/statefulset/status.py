"""A StatefulSet's status, computed from its pods and revisions.

Mirrors computeReplicaStatus and completeRollingUpdate (stateful_set_control.go): replicas
counts the pods created (they have a phase), readyReplicas those Running and Ready,
availableReplicas those ready for minReadySeconds, currentReplicas / updatedReplicas the live
pods at the current / update revision. Once a RollingUpdate has every pod updated and ready,
the update revision becomes the current one.
"""

from __future__ import annotations

from datetime import datetime

from controllers.statefulset.identity import pod_revision
from controllers.statefulset.plan import is_running_and_ready
from kube.api import Pod, StatefulSet, StatefulSetStatus
from kube.podutil import is_pod_available

__all__ = ["compute_status"]


def compute_status(sts: StatefulSet, pods: list[Pod], *, current: str, update: str, collision_count: int,
                   now: datetime) -> StatefulSetStatus:
    created = [p for p in pods if p.status.phase]
    live = [p for p in created if p.metadata.deletion_timestamp is None]
    min_ready = sts.spec.min_ready_seconds or 0
    ready = [p for p in created if is_running_and_ready(p)]
    status = sts.status.model_copy(update={
        "observed_generation": sts.metadata.generation,
        "replicas": len(created),
        "ready_replicas": len(ready),
        "available_replicas": sum(1 for p in ready if is_pod_available(p, min_ready_seconds=min_ready, now=now)),
        "current_replicas": sum(1 for p in live if pod_revision(p) == current),
        "updated_replicas": sum(1 for p in live if pod_revision(p) == update),
        "current_revision": current,
        "update_revision": update,
        "collision_count": collision_count,
    }, deep=True)
    strategy = sts.spec.update_strategy
    if (strategy is None or strategy.type == "RollingUpdate") and status.updated_replicas == status.replicas \
            and status.ready_replicas == status.replicas:
        status.current_replicas = status.updated_replicas
        status.current_revision = update
    return status
