"""The strategies of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Mirrors pkg/registry/core/persistentvolume(claim)/strategy.go and
pkg/registry/storage/storageclass/strategy.go: volumes and claims start Pending (status is
written only through `/status`, by the PV controller), their specs are validated as
pkg/apis/core/validation does, and volumes may be selected by `status.phase` as upstream's
field set allows. StorageClasses are validated as pkg/apis/storage/validation does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from apiserver.registry.storage_validation import (
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_update,
    validate_persistent_volume_update,
)
from apiserver.registry.storageclass_validation import validate_storage_class, validate_storage_class_update
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from kube.errors import FieldError

__all__ = ["PersistentVolumeStrategy", "PersistentVolumeClaimStrategy", "StorageClassStrategy"]


class PersistentVolumeStrategy(Strategy):
    selectable_fields: ClassVar[Mapping[str, str]] = {"status.phase": "status.phase"}

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=False) + validate_persistent_volume(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_object_meta(new, namespaced=False) + validate_persistent_volume_update(new, old)


class PersistentVolumeClaimStrategy(Strategy):
    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=True) + validate_persistent_volume_claim(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_object_meta(new, namespaced=True) + validate_persistent_volume_claim_update(new, old)


class StorageClassStrategy(Strategy):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=False) + validate_storage_class(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_object_meta(new, namespaced=False) + validate_storage_class_update(new, old)
