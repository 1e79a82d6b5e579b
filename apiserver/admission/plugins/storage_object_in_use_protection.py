"""StorageObjectInUseProtection: new claims and volumes carry their protection finalizers.

Mirrors plugin/pkg/admission/storage/storageobjectinuseprotection: every created
PersistentVolumeClaim gets `kubernetes.io/pvc-protection` and every PersistentVolume
`kubernetes.io/pv-protection`, so a claim a pod still uses, or a volume still bound, is only
marked for deletion; the pvc-protection and pv-protection controllers remove the finalizer
once nothing uses the object any more.
"""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Operation
from kube.api.core_v1_storage import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER

__all__ = ["StorageObjectInUseProtection"]


class StorageObjectInUseProtection:
    name = "StorageObjectInUseProtection"

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def admit(self, attrs: Attributes) -> None:
        obj = attrs.object
        if not isinstance(obj, dict):
            return
        if attrs.targets("", "persistentvolumeclaims"):
            finalizer = PVC_PROTECTION_FINALIZER
        elif attrs.targets("", "persistentvolumes"):
            finalizer = PV_PROTECTION_FINALIZER
        else:
            return
        meta = obj.setdefault("metadata", {})
        finalizers = meta.get("finalizers") or []
        if isinstance(finalizers, list) and finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]
