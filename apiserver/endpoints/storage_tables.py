"""The table printers of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Mirrors printPersistentVolume, printPersistentVolumeClaim and printStorageClass of
Kubernetes' pkg/printers/internalversion:
- PV: `NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS
  REASON AGE` (+ `VOLUMEMODE` with -o wide); STATUS is Terminating once deletion started;
- PVC: `NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE`
  (+ `VOLUMEMODE`); capacity and access modes print only once a volume is named;
- SC: `NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE`, the default
  class's name followed by ` (default)`.
Access modes print in upstream's short form (`RWO,ROX,RWX,RWOP`). Cells never raise.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import _AGE, _NAME, Column, Obj, Printer, _age, _name

__all__ = ["STORAGE_PRINTERS", "access_modes_string"]

_SHORT_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def access_modes_string(modes: Any) -> str:
    """GetAccessModesAsString: the short names of `modes`, in upstream's fixed order."""
    given = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in _SHORT_MODES if mode in given)


def _terminating(obj: Obj) -> bool:
    return bool(_dict(obj.get("metadata")).get("deletionTimestamp"))


def _class(obj: Obj, spec: Obj) -> str:
    beta = _dict(_dict(obj.get("metadata")).get("annotations")).get("volume.beta.kubernetes.io/storage-class")
    return str(beta or spec.get("storageClassName") or "")


def _unset(value: Any) -> str:
    return str(value) if value else "<unset>"


def _pv_cells(pv: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(pv.get("spec")), _dict(pv.get("status"))
    ref = _dict(spec.get("claimRef"))
    claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if ref else ""
    phase = "Terminating" if _terminating(pv) else str(status.get("phase") or "")
    return [_name(pv), str(_dict(spec.get("capacity")).get("storage") or "0"), access_modes_string(
        spec.get("accessModes")), str(spec.get("persistentVolumeReclaimPolicy") or ""), phase, claim,
        _class(pv, spec), _unset(spec.get("volumeAttributesClassName")), str(status.get("reason") or ""),
        _age(pv, now), _unset(spec.get("volumeMode"))]


def _pvc_cells(pvc: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(pvc.get("spec")), _dict(pvc.get("status"))
    phase = "Terminating" if _terminating(pvc) else str(status.get("phase") or "")
    capacity, modes = "", ""
    if spec.get("volumeName"):
        modes = access_modes_string(status.get("accessModes"))
        capacity = str(_dict(status.get("capacity")).get("storage") or "0")
    return [_name(pvc), phase, str(spec.get("volumeName") or ""), capacity, modes, _class(pvc, spec),
            _unset(status.get("currentVolumeAttributesClassName")), _age(pvc, now), _unset(spec.get("volumeMode"))]


def _sc_cells(sc: Obj, now: datetime) -> list[Any]:
    from kube.api.storage_v1 import is_default_class

    name = _name(sc)
    if is_default_class(_dict(sc.get("metadata")).get("annotations")):
        name += " (default)"
    return [name, str(sc.get("provisioner") or ""), str(sc.get("reclaimPolicy") or "Delete"),
            str(sc.get("volumeBindingMode") or "Immediate"), bool(sc.get("allowVolumeExpansion")), _age(sc, now)]


_VOLUME_MODE = Column("VolumeMode", priority=1, description="volumeMode defines if a volume is intended to be used "
                                                            "with a formatted filesystem or to remain in raw block "
                                                            "state.")

STORAGE_PRINTERS: dict[str, Printer] = {
    "PersistentVolume": Printer((
        _NAME, Column("Capacity", description="capacity is the description of the persistent volume's resources "
                                              "and capacity."),
        Column("Access Modes", description="accessModes contains all ways the volume can be mounted."),
        Column("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a persistent "
                                             "volume when released from its claim."),
        Column("Status", description="phase indicates if a volume is available, bound to a claim, or released by "
                                     "a claim."),
        Column("Claim", description="claimRef is part of a bi-directional binding between PersistentVolume and "
                                    "PersistentVolumeClaim."),
        Column("StorageClass", description="StorageClass of the pv"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
        Column("Reason", description="reason is a brief CamelCase string that describes any failure and is meant "
                                     "for machine parsing and tidy display in the CLI."),
        _AGE, _VOLUME_MODE), _pv_cells),
    "PersistentVolumeClaim": Printer((
        _NAME, Column("Status", description="phase represents the current phase of PersistentVolumeClaim."),
        Column("Volume", description="volumeName is the binding reference to the PersistentVolume backing this "
                                     "claim."),
        Column("Capacity", description="capacity represents the actual resources of the underlying volume."),
        Column("Access Modes", description="accessModes contains the desired access modes the volume should have."),
        Column("StorageClass", description="StorageClass of the pvc"),
        Column("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
        _AGE, _VOLUME_MODE), _pvc_cells),
    "StorageClass": Printer((
        _NAME, Column("Provisioner", description="provisioner indicates the type of the provisioner."),
        Column("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
                                            "PersistentVolumes of this storage class."),
        Column("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims should be "
                                                "provisioned and bound."),
        Column("AllowVolumeExpansion", description="allowVolumeExpansion shows whether the storage class allow "
                                                   "volume expand."),
        _AGE), _sc_cells),
}
