"""A DaemonSet's status, counted node by node.

Mirrors updateDaemonSetStatus of pkg/controller/daemon: for every node that should run the
daemon pod, desiredNumberScheduled counts it, currentNumberScheduled counts it when it has a
pod, and its oldest pod counts towards numberReady, numberAvailable (ready for
minReadySeconds) and updatedNumberScheduled (of the current revision); a pod on a node that
should not run one is misscheduled. numberUnavailable is desired minus available, and
observedGeneration the generation these numbers answer. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kube.api import DaemonSet, DaemonSetStatus, Pod
from kube.podutil import is_pod_ready

__all__ = ["calculate_status", "status_changed"]


def calculate_status(ds: DaemonSet, *, node_to_pods: Mapping[str, list[Pod]], should_run: Mapping[str, bool],
                     updated: Callable[[Pod], bool], available: Callable[[Pod], bool]) -> DaemonSetStatus:
    """The status `ds` should report; `should_run` covers every node in the cluster."""
    desired = current = misscheduled = ready = avail = up_to_date = 0
    for node, runs in should_run.items():
        pods = [p for p in node_to_pods.get(node, []) if p.metadata.deletion_timestamp is None]
        if runs:
            desired += 1
            if not pods:
                continue
            current += 1
            oldest = min(pods, key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name or ""))
            ready += is_pod_ready(oldest)
            avail += available(oldest)
            up_to_date += updated(oldest)
        elif pods:
            misscheduled += 1
    return DaemonSetStatus(desired_number_scheduled=desired, current_number_scheduled=current,
                           number_misscheduled=misscheduled, number_ready=ready,
                           # omitempty upstream: these three are left out when zero
                           number_available=avail or None, updated_number_scheduled=up_to_date or None,
                           number_unavailable=(desired - avail) or None,
                           observed_generation=ds.metadata.generation,
                           collision_count=ds.status.collision_count, conditions=ds.status.conditions)


def status_changed(old: DaemonSetStatus, new: DaemonSetStatus) -> bool:
    return old.to_dict() != new.to_dict()
