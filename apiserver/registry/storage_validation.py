"""Validation of PersistentVolumes and PersistentVolumeClaims, with upstream's messages.

Mirrors ValidatePersistentVolume(Spec|Update) and ValidatePersistentVolumeClaim(Spec|Update)
of pkg/apis/core/validation, for the volume sources picokube provisions and mounts (hostPath,
local) and any other source kept as given:
- a volume has at least one access mode, exactly a `storage` capacity, exactly one source, a
  known reclaim policy and volume mode; a `local` volume needs node affinity;
- a claim has at least one access mode and a positive `resources.requests[storage]`;
- a volume's source and mode never change; a claim's spec never changes, except that its
  `volumeName` may be set once (binding) and a bound claim may grow its storage request,
  never shrink it.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from apiserver.registry.strategy import DNS1123_SUBDOMAIN
from apiserver.validation.field import forbidden, invalid, not_supported, required
from kube.errors import FieldError
from kube.quantity import parse_quantity

__all__ = ["ACCESS_MODES", "VOLUME_SOURCES", "validate_persistent_volume", "validate_persistent_volume_update",
           "validate_pvc_spec", "validate_persistent_volume_claim", "validate_persistent_volume_claim_update"]

Obj = dict[str, Any]

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
VOLUME_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "iscsi",
                  "cinder", "cephfs", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "quobyte",
                  "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi")
_DNS_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value) if isinstance(value, (str, int, float)) else None
    except (InvalidOperation, ValueError):
        return None


def _access_modes(path: str, modes: Any) -> list[FieldError]:
    if not isinstance(modes, list) or not modes:
        return [required(path, "at least 1 access mode is required")]
    errs = [not_supported(path, m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _class_name(path: str, name: Any) -> list[FieldError]:
    if name and (not isinstance(name, str) or len(name) > 253 or not DNS1123_SUBDOMAIN.match(name)):
        return [invalid(path, name, _DNS_MSG)]
    return []


def _volume_mode(path: str, mode: Any) -> list[FieldError]:
    return [not_supported(path, mode, VOLUME_MODES)] if mode is not None and mode not in VOLUME_MODES else []


def _sources(spec: Obj) -> list[FieldError]:
    given = [s for s in VOLUME_SOURCES if spec.get(s) is not None]
    if not given:
        return [required("spec", "must specify a volume type")]
    errs = [forbidden(f"spec.{s}", "may not specify more than 1 volume type") for s in given[1:]]
    for source in ("hostPath", "local"):
        if source in given and not _dict(spec.get(source)).get("path"):
            errs.append(required(f"spec.{source}.path"))
    if "local" in given and not _dict(_dict(spec.get("nodeAffinity")).get("required")).get("nodeSelectorTerms"):
        errs.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    return errs


def validate_persistent_volume(obj: Obj) -> list[FieldError]:
    """Every error in a volume's spec (ValidatePersistentVolumeSpec)."""
    spec = _dict(obj.get("spec"))
    errs = _access_modes("spec.accessModes", spec.get("accessModes"))
    capacity = spec.get("capacity")
    if not isinstance(capacity, dict) or not capacity:
        errs.append(required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", capacity, ("storage",)))
    else:
        size = _quantity(capacity["storage"])
        if size is None or size <= 0:
            errs.append(invalid("spec.capacity[storage]", capacity["storage"], "must be greater than zero"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    errs += _class_name("spec.storageClassName", spec.get("storageClassName"))
    errs += _volume_mode("spec.volumeMode", spec.get("volumeMode"))
    return errs + _sources(spec)


def validate_persistent_volume_update(new: Obj, old: Obj) -> list[FieldError]:
    """A volume's source, mode and (once set) node affinity never change (ValidatePersistentVolumeUpdate)."""
    errs = validate_persistent_volume(new)
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    if any(new_spec.get(s) != old_spec.get(s) for s in VOLUME_SOURCES):
        errs.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is forbidden once it "
                                                             "was created"))
    if new_spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(invalid("spec.volumeMode", new_spec.get("volumeMode"), "field is immutable"))
    if old_spec.get("nodeAffinity") is not None and new_spec.get("nodeAffinity") != old_spec.get("nodeAffinity"):
        errs.append(forbidden("spec.nodeAffinity", "field is immutable"))
    return errs


def validate_pvc_spec(spec: Obj, path: str) -> list[FieldError]:
    """Every error in a claim's spec (ValidatePersistentVolumeClaimSpec); `path` prefixes the fields."""
    errs = _access_modes(f"{path}.accessModes", spec.get("accessModes"))
    errs += _class_name(f"{path}.storageClassName", spec.get("storageClassName"))
    requests = _dict(_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(required(f"{path}.resources[storage]"))
    else:
        size = _quantity(requests["storage"])
        if size is None or size <= 0:
            errs.append(invalid(f"{path}.resources.requests[storage]", requests["storage"],
                                "must be greater than zero"))
    return errs + _volume_mode(f"{path}.volumeMode", spec.get("volumeMode"))


def validate_persistent_volume_claim(obj: Obj) -> list[FieldError]:
    return validate_pvc_spec(_dict(obj.get("spec")), "spec")


def validate_persistent_volume_claim_update(new: Obj, old: Obj) -> list[FieldError]:
    """ValidatePersistentVolumeClaimUpdate: only binding (`volumeName` once) and growth of a bound claim."""
    errs = validate_persistent_volume_claim(new)
    new_spec, old_spec = dict(_dict(new.get("spec"))), dict(_dict(old.get("spec")))
    if not old_spec.get("volumeName") and "volumeName" in new_spec:
        old_spec["volumeName"] = new_spec["volumeName"]  # binding sets it once
    if old_spec.get("storageClassName") is None and "storageClassName" in new_spec:
        old_spec["storageClassName"] = new_spec["storageClassName"]  # a default class set retroactively
    new_size = _quantity(_dict(_dict(new_spec.get("resources")).get("requests")).get("storage"))
    old_size = _quantity(_dict(_dict(old_spec.get("resources")).get("requests")).get("storage"))
    bound = _dict(old.get("status")).get("phase") == "Bound"
    if bound:  # a bound claim may change its storage request (growth is checked below)
        new_spec["resources"] = old_spec.get("resources")
    if new_spec != old_spec:
        errs.append(forbidden("spec", "spec is immutable after creation except resources.requests and "
                                      "volumeAttributesClassName for bound claims"))
    if bound and new_size is not None and old_size is not None and new_size < old_size:
        errs.append(forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
    return errs
