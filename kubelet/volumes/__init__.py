"""A pod's volumes on the node: payloads, the atomic writer, hostPath checks, the manager."""

from kubelet.volumes.atomic_writer import DATA_DIR, FileProjection, validate_path, write_payload
from kubelet.volumes.manager import MountedVolume, SetUpResult, VolumeManager
from kubelet.volumes.payloads import PayloadContext, VolumeError

__all__ = ["DATA_DIR", "FileProjection", "MountedVolume", "PayloadContext", "SetUpResult", "VolumeError",
           "VolumeManager", "validate_path", "write_payload"]
