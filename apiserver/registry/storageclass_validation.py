"""Validation of storage.k8s.io/v1 StorageClasses, with upstream's messages.

Mirrors ValidateStorageClass and ValidateStorageClassUpdate of pkg/apis/storage/validation:
the provisioner is required and a qualified name; the reclaim policy is Delete or Retain; the
binding mode is Immediate or WaitForFirstConsumer; provisioner, parameters, reclaim policy and
binding mode never change once created.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.strategy import qualified_name_error
from apiserver.validation.field import forbidden, invalid, not_supported, required
from kube.errors import FieldError

__all__ = ["validate_storage_class", "validate_storage_class_update"]

Obj = dict[str, Any]

_RECLAIM = ("Delete", "Retain")
_BINDING = ("Immediate", "WaitForFirstConsumer")


def validate_storage_class(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    provisioner = obj.get("provisioner")
    if not provisioner:
        errs.append(required("provisioner"))
    elif not isinstance(provisioner, str) or (problem := qualified_name_error(provisioner)):
        errs.append(invalid("provisioner", provisioner, str(problem if isinstance(provisioner, str) else "")))
    elif len(provisioner) > 63:
        errs.append(FieldError("provisioner", "Too long: may not be longer than 63",
                               reason="FieldValueTooLong"))
    if (policy := obj.get("reclaimPolicy")) is not None and policy not in _RECLAIM:
        errs.append(not_supported("reclaimPolicy", policy, _RECLAIM))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in _BINDING:
        errs.append(not_supported("volumeBindingMode", mode, _BINDING))
    return errs


def validate_storage_class_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_storage_class(new)
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
        errs.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), "field is immutable"))
    return errs
