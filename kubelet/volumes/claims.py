"""persistentVolumeClaim volumes: the node path of the PersistentVolume a claim is bound to.

Mirrors the kubelet volume manager's claim lookup (desired_state_of_world_populator's
getPVCExtractPV) for volumes that are node paths (`hostPath`, `local`, which is what the
local-path provisioner creates):
- the claim must exist, not be terminating, and be Bound; else the volume fails with
  upstream's words (`error processing PVC ns/x: PVC is not bound`);
- the volume's `hostPath` is checked by its type (DirectoryOrCreate creates a directory,
  world-writable as local-path-provisioner makes it, so any container user may write);
  a `local.path` must already exist;
- any other volume source is not mountable by this kubelet: the volume fails saying so.
Objects are read with raw GETs through the kubelet's client (the Node authorizer allows
claims of its pods and their volumes).
"""

from __future__ import annotations

import os
from typing import Any

from kube.errors import ApiError
from kubelet.pod_objects import ObjectGetter
from kubelet.volumes.host_path import check_host_path
from kubelet.volumes.payloads import VolumeError

__all__ = ["claim_host_path"]


async def _get(client: ObjectGetter, path: str) -> dict[str, Any]:
    return dict(await client.request("GET", path))


async def claim_host_path(client: ObjectGetter | None, *, namespace: str, claim: str) -> str:
    """The node directory backing the claim; VolumeError while it cannot be mounted."""
    where = f"error processing PVC {namespace}/{claim}"
    if client is None:
        raise VolumeError(f"{where}: no API server")
    try:
        pvc = await _get(client, f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{claim}")
    except ApiError as e:
        raise VolumeError(f"{where}: failed to fetch PVC from API server: {e}") from e
    if (pvc.get("metadata") or {}).get("deletionTimestamp"):
        raise VolumeError(f"{where}: PVC is being deleted")
    volume_name = (pvc.get("spec") or {}).get("volumeName")
    if (pvc.get("status") or {}).get("phase") != "Bound" or not volume_name:
        raise VolumeError(f"{where}: PVC is not bound")
    try:
        pv = await _get(client, f"/api/v1/persistentvolumes/{volume_name}")
    except ApiError as e:
        raise VolumeError(f"{where}: failed to fetch PV {volume_name} from API server: {e}") from e
    spec = pv.get("spec") or {}
    host_path, local = spec.get("hostPath") or {}, spec.get("local") or {}
    try:
        if host_path.get("path"):
            path = check_host_path(host_path["path"], host_path.get("type"))
            if host_path.get("type") == "DirectoryOrCreate":
                os.chmod(path, 0o777)
            return str(path)
        if local.get("path"):
            return str(check_host_path(local["path"], "Directory"))
    except ValueError as e:
        raise VolumeError(f"{where}: {e}") from e
    raise VolumeError(f"{where}: volume {volume_name} is not a node path this kubelet can mount")
