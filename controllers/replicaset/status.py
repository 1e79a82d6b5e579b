"""A ReplicaSet's status, computed from the pods it manages.

Mirrors calculateStatus in pkg/controller/replicaset/replica_set_utils.go. Counts only the
pods the controller claimed and considers active:
- replicas: all of them;
- fullyLabeledReplicas: those carrying every label of the pod template;
- readyReplicas: those with condition Ready=True;
- availableReplicas: those ready for at least spec.minReadySeconds;
- observedGeneration: the generation this status describes.
Fields of the old status this controller does not own (such as conditions) are kept.
"""

from __future__ import annotations

from datetime import datetime

from controllers.replicaset.kinds import Managed
from kube.api import Pod, ReplicaSetStatus, ReplicationControllerStatus
from kube.podutil import is_pod_available, is_pod_ready

__all__ = ["calculate_status", "status_changed"]


def calculate_status(rs: Managed, pods: list[Pod], *, now: datetime) -> ReplicaSetStatus | ReplicationControllerStatus:
    template_labels = (rs.spec.template.metadata.labels or {}).items()
    min_ready = rs.spec.min_ready_seconds or 0
    return rs.status.model_copy(update={
        "replicas": len(pods),
        "fully_labeled_replicas": sum(1 for p in pods if template_labels <= (p.metadata.labels or {}).items()),
        "ready_replicas": sum(1 for p in pods if is_pod_ready(p)),
        "available_replicas": sum(1 for p in pods if is_pod_available(p, min_ready_seconds=min_ready, now=now)),
        "observed_generation": rs.metadata.generation,
    }, deep=True)


def status_changed(old: ReplicaSetStatus | ReplicationControllerStatus,
                   new: ReplicaSetStatus | ReplicationControllerStatus) -> bool:
    return old.to_dict() != new.to_dict()
