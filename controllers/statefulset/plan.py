"""What one sync of a StatefulSet does to its pods: which ordinals to create, which pods to delete.

Mirrors the ordering rules of stateful_set_control.go (updateStatefulSet), one step of them per
call; the controller runs again on every pod event until nothing is left to do:
1. ordinals start..start+replicas-1 must exist: a missing one is created, a failed or
   succeeded one deleted (to be recreated); under OrderedReady the first missing, failed,
   terminating or not Running-and-Ready pod (for minReadySeconds) ends the step, so web-1 is
   created only once web-0 is Running and Ready;
2. pods beyond the replicas (condemned) are deleted from the highest ordinal down: under
   OrderedReady one at a time, each only once every other pod is healthy and the previous one
   has gone; under Parallel all at once;
3. with the RollingUpdate strategy and nothing else to do, the pod with the highest ordinal
   >= partition that is not at the update revision is deleted (and so recreated from the
   update template), one at a time, each waiting for the ones above it to be Running and
   Ready. OnDelete never deletes for an update: pods take the update revision when
   recreated.
A created pod takes the current revision when its ordinal is below the partition, the update
revision otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from kube.api import Pod, StatefulSet
from kube.podutil import is_pod_available, is_pod_ready

__all__ = ["Plan", "is_running_and_ready", "plan_sync", "uses_update_revision"]


@dataclass
class Plan:
    create: list[int] = field(default_factory=list)
    """Ordinals to create."""
    delete: list[Pod] = field(default_factory=list)


def is_running_and_ready(pod: Pod) -> bool:
    return pod.status.phase == "Running" and is_pod_ready(pod)


def _terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def _partition(sts: StatefulSet) -> int | None:
    strategy = sts.spec.update_strategy
    if strategy is None or strategy.type != "RollingUpdate" or strategy.rolling_update is None:
        return None
    return strategy.rolling_update.partition or 0


def uses_update_revision(sts: StatefulSet, ordinal: int, start: int) -> bool:
    """Whether a pod created now for `ordinal` takes the update revision (else the current one)."""
    strategy = sts.spec.update_strategy
    if strategy is None or strategy.type != "RollingUpdate":
        return True
    partition = _partition(sts)
    limit = partition if partition is not None else sts.status.current_replicas or 0
    return ordinal >= start + limit


def plan_sync(sts: StatefulSet, replicas: dict[int, Pod], condemned: list[Pod], *, start: int,
              update_revision: str, revision_of: dict[str, str], now: datetime) -> Plan:
    """One step (see the module doc). `condemned` is sorted by ordinal, highest first;
    `revision_of` maps pod name to its controller-revision-hash."""
    parallel = sts.spec.pod_management_policy == "Parallel"
    want = sts.spec.replicas if sts.spec.replicas is not None else 1
    plan = Plan()
    for ordinal in range(start, start + want):
        pod = replicas.get(ordinal)
        if pod is None:
            plan.create.append(ordinal)
        elif pod.status.phase in ("Failed", "Succeeded") and not _terminating(pod):
            plan.delete.append(pod)
        elif not _terminating(pod) and is_running_and_ready(pod) and \
                is_pod_available(pod, min_ready_seconds=sts.spec.min_ready_seconds or 0, now=now):
            continue
        if not parallel:
            return plan
    for pod in condemned:
        if _terminating(pod):
            if not parallel:
                return plan
            continue
        plan.delete.append(pod)
        if not parallel:
            return plan
    if plan.create or plan.delete or len(replicas) < want:
        return plan
    partition = _partition(sts)
    if partition is None:
        return plan  # OnDelete
    for ordinal in range(start + want - 1, start + partition - 1, -1):
        pod = replicas[ordinal]
        if revision_of.get(pod.metadata.name or "") != update_revision and not _terminating(pod):
            plan.delete.append(pod)
            return plan
        if _terminating(pod) or not is_running_and_ready(pod):
            return plan
    return plan
