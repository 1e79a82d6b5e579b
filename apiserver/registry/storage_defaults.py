"""Defaults of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Mirrors SetDefaults_PersistentVolume, SetDefaults_PersistentVolumeClaim(Spec) and
SetDefaults_HostPathVolumeSource of pkg/apis/core/v1, and SetDefaults_StorageClass of
pkg/apis/storage/v1: a volume is reclaimed by Retain and a class by Delete, volumes and
claims are Filesystem volumes, a class binds Immediate, and both volumes and claims start
Pending. Defaults never overwrite a value.
"""

from __future__ import annotations

from typing import Any

__all__ = ["default_persistent_volume", "default_persistent_volume_claim", "default_pvc_spec",
           "default_storage_class"]

Obj = dict[str, Any]


def _dict(obj: Obj, key: str) -> Obj | None:
    value = obj.setdefault(key, {})
    return value if isinstance(value, dict) else None


def default_persistent_volume(obj: Obj) -> None:
    spec = _dict(obj, "spec")
    if spec is not None:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        host_path = spec.get("hostPath")
        if isinstance(host_path, dict):
            host_path.setdefault("type", "")
    if "status" in obj:
        status = _dict(obj, "status")
        if status is not None:
            status.setdefault("phase", "Pending")


def default_pvc_spec(spec: Obj) -> None:
    """The defaults of a claim's spec, shared with StatefulSets' volumeClaimTemplates."""
    spec.setdefault("volumeMode", "Filesystem")


def default_persistent_volume_claim(obj: Obj) -> None:
    spec = _dict(obj, "spec")
    if spec is not None:
        default_pvc_spec(spec)
    if "status" in obj:
        status = _dict(obj, "status")
        if status is not None:
            status.setdefault("phase", "Pending")


def default_storage_class(obj: Obj) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")
