"""core/v1 PersistentVolume and PersistentVolumeClaim: storage a pod can claim and keep.

A PersistentVolume (cluster-scoped) is a piece of storage; a PersistentVolumeClaim
(namespaced) asks for one. The PV binder joins the two both ways: the claim's
`spec.volumeName` names the volume and the volume's `spec.claimRef` names the claim. The
phases are upstream's: a volume is Available, Bound, Released (its claim is gone) or Failed;
a claim is Pending, Bound or Lost (its volume is gone).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from kube.api.base import KubeModel, KubeObject
from kube.api.core_v1 import NodeSelector, ObjectReference
from kube.api.meta import LabelSelector, ObjectMeta
from kube.resources import ResourceInfo, resource_for_kind

__all__ = [
    "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_DYNAMICALLY_PROVISIONED", "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER", "ANN_BETA_STORAGE_PROVISIONER", "CLAIM_BOUND", "CLAIM_LOST", "CLAIM_PENDING",
    "HostPathVolumeSource", "LocalVolumeSource", "PVC_PROTECTION_FINALIZER", "PV_PROTECTION_FINALIZER",
    "PersistentVolume", "PersistentVolumeClaim", "PersistentVolumeClaimSpec", "PersistentVolumeClaimStatus",
    "PersistentVolumeSpec", "PersistentVolumeStatus", "VOLUME_AVAILABLE", "VOLUME_BOUND", "VOLUME_FAILED",
    "VOLUME_PENDING", "VOLUME_RELEASED", "VolumeNodeAffinity", "VolumeResourceRequirements",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"

VOLUME_PENDING, VOLUME_AVAILABLE, VOLUME_BOUND, VOLUME_RELEASED, VOLUME_FAILED = (
    "Pending", "Available", "Bound", "Released", "Failed")
CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST = "Pending", "Bound", "Lost"


def _info(kind: str) -> ResourceInfo:
    found = resource_for_kind("v1", kind)
    assert found is not None, kind
    return found


class HostPathVolumeSource(KubeModel):
    path: str
    type: str | None = None


class LocalVolumeSource(KubeModel):
    path: str
    fs_type: str | None = None


class VolumeNodeAffinity(KubeModel):
    required: NodeSelector | None = None


class PersistentVolumeSpec(KubeModel):
    capacity: dict[str, str] | None = None
    access_modes: list[str] | None = None
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    mount_options: list[str] | None = None
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    host_path: HostPathVolumeSource | None = None
    local: LocalVolumeSource | None = None


class PersistentVolumeStatus(KubeModel):
    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: str | None = None


class PersistentVolume(KubeObject):
    info: ClassVar[ResourceInfo] = _info("PersistentVolume")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = Field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = Field(default_factory=PersistentVolumeStatus)


class VolumeResourceRequirements(KubeModel):
    requests: dict[str, str] | None = None
    limits: dict[str, str] | None = None


class PersistentVolumeClaimSpec(KubeModel):
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = Field(default_factory=VolumeResourceRequirements)
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None


class PersistentVolumeClaimStatus(KubeModel):
    phase: str | None = None
    access_modes: list[str] | None = None
    capacity: dict[str, str] | None = None


class PersistentVolumeClaim(KubeObject):
    info: ClassVar[ResourceInfo] = _info("PersistentVolumeClaim")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = Field(default_factory=PersistentVolumeClaimStatus)
