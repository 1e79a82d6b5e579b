"""A Deployment's status, computed from its ReplicaSets.

Mirrors calculateStatus in pkg/controller/deployment/sync.go:
- replicas / readyReplicas / availableReplicas: sums over all its ReplicaSets' status;
- updatedReplicas: the new ReplicaSet's status.replicas;
- unavailableReplicas: the sum of spec.replicas minus availableReplicas, never below 0;
- observedGeneration: the Deployment's generation;
- Available: True when availableReplicas >= spec.replicas - maxUnavailable.
Conditions and collisionCount are carried over from `base`. Pure.
"""

from __future__ import annotations

from datetime import datetime

from controllers.deployment.conditions import (
    AVAILABLE,
    MIN_AVAILABLE,
    MIN_UNAVAILABLE,
    new_condition,
    set_condition,
)
from controllers.deployment.fenceposts import desired_replicas, max_unavailable
from kube.api import Deployment, DeploymentStatus, ReplicaSet

__all__ = ["calculate_status"]


def calculate_status(d: Deployment, *, new_rs: ReplicaSet | None, replicasets: list[ReplicaSet],
                     base: DeploymentStatus, now: datetime) -> DeploymentStatus:
    available = sum(rs.status.available_replicas or 0 for rs in replicasets)
    wanted = sum(rs.spec.replicas or 0 for rs in replicasets)
    status = base.model_copy(deep=True)
    status.observed_generation = d.metadata.generation
    status.replicas = sum(rs.status.replicas for rs in replicasets)
    status.updated_replicas = new_rs.status.replicas if new_rs is not None else 0
    status.ready_replicas = sum(rs.status.ready_replicas or 0 for rs in replicasets)
    status.available_replicas = available
    status.unavailable_replicas = max(0, wanted - available)
    if available >= desired_replicas(d) - max_unavailable(d):
        cond = new_condition(AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability.", now=now)
    else:
        cond = new_condition(AVAILABLE, "False", MIN_UNAVAILABLE, "Deployment does not have minimum availability.",
                             now=now)
    set_condition(status, cond)
    return status
