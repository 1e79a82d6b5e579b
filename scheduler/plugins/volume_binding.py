"""VolumeBinding: a pod fits only where its claims' volumes can be used.

Mirrors kube-scheduler `plugins/volumebinding` (PreFilter and Filter; its PreBind is the
scheduler's `VolumeBinder`), with upstream's reasons:
- PreFilter: a claim that does not exist makes the pod unschedulable anywhere
  (`persistentvolumeclaim "x" not found`), as does one being deleted, and an unbound claim
  that is not of a WaitForFirstConsumer class (`pod has unbound immediate
  PersistentVolumeClaims`); a pod without claims is skipped;
- Filter: each bound volume's required node affinity must match the node (`node(s) had
  volume node affinity conflict`); a WaitForFirstConsumer claim of the local-path provisioner
  needs a node that keeps local volumes, one of a class without a provisioner
  (`kubernetes.io/no-provisioner`) a node that one of the matching volumes admits (both
  `node(s) didn't find available persistent volumes to bind`); other WaitForFirstConsumer
  claims fit any node.
Without a lister (a framework built without the scheduler's caches) the plugin passes every pod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kube.api import PersistentVolume, PersistentVolumeClaim, Pod
from kube.volume_matching import find_matching_volume
from kube.volumeutil import LOCAL_PATH_PROVISIONER, LOCAL_VOLUME_DIR_ANNOTATION, pod_claim_names
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status
from scheduler.plugins._node_selection import term_matches
from scheduler.volume_binder import VolumeLister

__all__ = ["VolumeBinding", "NAME", "ERR_UNBOUND_IMMEDIATE", "ERR_NODE_CONFLICT", "ERR_BIND_CONFLICT"]

NAME = "VolumeBinding"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
_STATE_KEY = "PreFilter" + NAME


@dataclass(frozen=True)
class _PodVolumes:
    bound: tuple[PersistentVolume, ...]
    static: tuple[PersistentVolumeClaim, ...]
    """Delayed claims of a class without a provisioner: they need an existing volume on the node."""
    local_path: bool
    """Some delayed claim is provisioned by the local-path provisioner."""


class VolumeBinding:
    name = NAME

    def __init__(self, lister: VolumeLister | None = None) -> None:
        self.lister = lister

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        names = pod_claim_names(pod)
        if self.lister is None or not names:
            return Status.skip()
        bound: list[PersistentVolume] = []
        static: list[PersistentVolumeClaim] = []
        local_path = False
        for name in names:
            claim = self.lister.claim(pod.metadata.namespace, name)
            if claim is None:
                return Status.unresolvable(f'persistentvolumeclaim "{name}" not found', plugin=NAME)
            if claim.metadata.deletion_timestamp is not None:
                return Status.unresolvable(f'persistentvolumeclaim "{name}" is being deleted', plugin=NAME)
            if claim.spec.volume_name:
                volume = self.lister.volume(claim.spec.volume_name)
                if volume is None:
                    return Status.unresolvable(f'persistentvolume "{claim.spec.volume_name}" not found',
                                               plugin=NAME)
                bound.append(volume)
            elif self.lister.delays_binding(claim):
                storage_class = self.lister.storage_class(claim.spec.storage_class_name)
                provisioner = storage_class.provisioner if storage_class is not None else ""
                if provisioner == NO_PROVISIONER:
                    static.append(claim)
                else:
                    local_path = local_path or provisioner == LOCAL_PATH_PROVISIONER
            else:
                return Status.unresolvable(ERR_UNBOUND_IMMEDIATE, plugin=NAME)
        state.write(_STATE_KEY, _PodVolumes(tuple(bound), tuple(static), local_path))
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        volumes: _PodVolumes | None = state.get(_STATE_KEY)
        node = node_info.node
        if volumes is None or node is None:
            return None
        for volume in volumes.bound:
            required = volume.spec.node_affinity.required if volume.spec.node_affinity else None
            if required is not None and not any(term_matches(t, node) for t in required.node_selector_terms):
                return Status.unresolvable(ERR_NODE_CONFLICT, plugin=NAME)
        if volumes.local_path and not (node.metadata.annotations or {}).get(LOCAL_VOLUME_DIR_ANNOTATION):
            return Status.unschedulable(ERR_BIND_CONFLICT, plugin=NAME)
        if volumes.static and self.lister is not None:
            available = self.lister.list_volumes()
            for claim in volumes.static:
                chosen = find_matching_volume(claim, available, node=node)
                if chosen is None:
                    return Status.unschedulable(ERR_BIND_CONFLICT, plugin=NAME)
                available = [v for v in available if v is not chosen]  # one volume per claim
        return None


def new(args: Mapping[str, Any], *, lister: VolumeLister | None = None) -> VolumeBinding:
    return VolumeBinding(lister)
