"""What a pod asks of storage (the claims its volumes name), and picokube's local-path names.

Shared by the PVC protection controller, the PV binder, the scheduler's volume binding and
the kubelet, so all of them read a pod's `spec.volumes[*].persistentVolumeClaim.claimName`
the same way (whether the volumes are typed models or kept as wire dicts) and agree on the
local-path provisioner's name and the Node annotation through which a kubelet publishes
where its local volumes live.
"""

from __future__ import annotations

from typing import Any

from kube.api import Pod
from kube.api.base import KubeModel

__all__ = ["LOCAL_PATH_PROVISIONER", "LOCAL_VOLUME_DIR_ANNOTATION", "pod_claim_names", "pod_volumes"]

LOCAL_PATH_PROVISIONER = "picokube.io/local-path"
LOCAL_VOLUME_DIR_ANNOTATION = "picokube.io/local-volume-dir"


def pod_volumes(pod: Pod) -> list[dict[str, Any]]:
    """The pod's `spec.volumes` in wire form (camelCase keys); [] when it has none."""
    raw = getattr(pod.spec, "volumes", None)
    if raw is None:
        raw = (pod.spec.model_extra or {}).get("volumes")
    volumes: list[dict[str, Any]] = []
    for volume in raw or []:
        if isinstance(volume, KubeModel):
            volumes.append(volume.to_dict())
        elif isinstance(volume, dict):
            volumes.append(volume)
    return volumes


def pod_claim_names(pod: Pod) -> list[str]:
    """The names of the claims the pod's volumes use, in order, without duplicates."""
    names: list[str] = []
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        name = source.get("claimName") if isinstance(source, dict) else None
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names
