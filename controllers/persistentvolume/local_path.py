"""The local-path provisioner: a directory on the chosen node for each claim.

picokube's in-tree provisioner `picokube.io/local-path` (after Rancher's local-path-provisioner):
a claim of such a class, once the scheduler has picked a node for its first pod (the claim's
`volume.kubernetes.io/selected-node` annotation), gets a PersistentVolume named
`pvc-<claim uid>` whose `hostPath` is `<volume dir>/pvc-<claim uid>` (type DirectoryOrCreate,
so the kubelet creates it when it first mounts it), pinned to that node by a required
`kubernetes.io/hostname` node affinity, pre-bound to the claim, reclaimed as its class says.

The volume directory is the node's own: each kubelet publishes it as the node annotation
`picokube.io/local-volume-dir` (its `--local-volume-dir`), so nodes with different data dirs
work. A node without it cannot receive local-path volumes (the claim stays Pending with a
ProvisioningFailed event). Deleting the directory is the kubelet's job too
(`kubelet/local_volumes.py`): it removes directories whose volume no longer exists.
"""

from __future__ import annotations

from kube.api import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    HostPathVolumeSource,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    StorageClass,
    VolumeNodeAffinity,
)
from kube.volumeutil import LOCAL_PATH_PROVISIONER, LOCAL_VOLUME_DIR_ANNOTATION

__all__ = ["LOCAL_PATH_PROVISIONER", "LOCAL_VOLUME_DIR_ANNOTATION", "HOSTNAME_LABEL", "ProvisioningError",
           "provisioned_volume_name", "local_path_volume"]

HOSTNAME_LABEL = "kubernetes.io/hostname"


class ProvisioningError(Exception):
    """Why a volume cannot be provisioned now; the message goes into a ProvisioningFailed event."""


def provisioned_volume_name(claim: PersistentVolumeClaim) -> str:
    """`pvc-<uid>`: upstream's name for a dynamically provisioned volume (GetPersistentVolumeClaimVolumeName)."""
    return f"pvc-{claim.metadata.uid}"


def local_path_volume(claim: PersistentVolumeClaim, storage_class: StorageClass, node: Node | None,
                      node_name: str) -> PersistentVolume:
    """The volume for `claim` on `node`; raises ProvisioningError when the node cannot hold one."""
    if node is None:
        raise ProvisioningError(f'node "{node_name}" not found')
    volume_dir = (node.metadata.annotations or {}).get(LOCAL_VOLUME_DIR_ANNOTATION)
    if not volume_dir:
        raise ProvisioningError(f'node "{node_name}" has no {LOCAL_VOLUME_DIR_ANNOTATION} annotation: its kubelet '
                                "keeps no local volumes")
    name = provisioned_volume_name(claim)
    hostname = (node.metadata.labels or {}).get(HOSTNAME_LABEL, node_name)
    affinity = VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=[
        NodeSelectorRequirement(key=HOSTNAME_LABEL, operator="In", values=[hostname])])]))
    ref = ObjectReference(api_version="v1", kind="PersistentVolumeClaim", namespace=claim.metadata.namespace,
                          name=claim.metadata.name, uid=claim.metadata.uid,
                          resource_version=claim.metadata.resource_version)
    return PersistentVolume(
        metadata=ObjectMeta(name=name, annotations={ANN_DYNAMICALLY_PROVISIONED: storage_class.provisioner,
                                                    ANN_BOUND_BY_CONTROLLER: "yes"}),
        spec=PersistentVolumeSpec(
            capacity={"storage": (claim.spec.resources.requests or {}).get("storage", "0")},
            access_modes=list(claim.spec.access_modes or []), claim_ref=ref,
            persistent_volume_reclaim_policy=storage_class.reclaim_policy or "Delete",
            storage_class_name=claim.spec.storage_class_name, mount_options=storage_class.mount_options,
            volume_mode=claim.spec.volume_mode or "Filesystem", node_affinity=affinity,
            host_path=HostPathVolumeSource(path=f"{volume_dir.rstrip('/')}/{name}", type="DirectoryOrCreate")))
