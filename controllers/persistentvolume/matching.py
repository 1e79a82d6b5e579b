"""Which volume a claim may bind to: upstream's FindMatchingVolume, as pure functions.

Mirrors pkg/controller/volume/persistentvolume/index.go and pkg/volume/util's
FindMatchingVolume: a volume matches a claim when
- it is not being deleted, not Released or Failed, and not bound to another claim (a volume
  whose claimRef names this claim, by namespace, name and, when set, uid, matches at once:
  the claim was pre-bound);
- it is of the claim's class (`spec.storageClassName`, "" for none), has the claim's volume
  mode, offers every access mode the claim asks for, and at least the storage it requests;
- its labels match the claim's selector.
Of the matches the smallest volume wins (ties: the name), so big volumes stay for big claims.
A volume pre-bound to a claim wins regardless of size.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from kube.api import PersistentVolume, PersistentVolumeClaim
from kube.quantity import parse_quantity
from kube.selectors import selector_from_label_selector

__all__ = ["claim_request", "volume_capacity", "find_matching_volume", "claim_ref_matches", "is_pre_bound_to"]


def _size(value: str | None) -> Decimal:
    try:
        return parse_quantity(value) if value else Decimal(0)
    except (InvalidOperation, ValueError):
        return Decimal(0)


def claim_request(claim: PersistentVolumeClaim) -> Decimal:
    return _size((claim.spec.resources.requests or {}).get("storage"))


def volume_capacity(volume: PersistentVolume) -> Decimal:
    return _size((volume.spec.capacity or {}).get("storage"))


def claim_ref_matches(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The volume's claimRef names this claim (its uid too, when the ref has one)."""
    ref = volume.spec.claim_ref
    if ref is None or ref.name != claim.metadata.name or ref.namespace != claim.metadata.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid


def is_pre_bound_to(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    return claim_ref_matches(volume, claim)


def _fits(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    if (volume.spec.storage_class_name or "") != (claim.spec.storage_class_name or ""):
        return False
    if (volume.spec.volume_mode or "Filesystem") != (claim.spec.volume_mode or "Filesystem"):
        return False
    if not set(claim.spec.access_modes or []) <= set(volume.spec.access_modes or []):
        return False
    if volume_capacity(volume) < claim_request(claim):
        return False
    if claim.spec.selector is not None:
        selector = selector_from_label_selector(claim.spec.selector.to_dict())
        if not selector.matches(volume.metadata.labels or {}):
            return False
    return True


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume]) -> PersistentVolume | None:
    """The volume `claim` should bind to, or None; pure, safe to call concurrently."""
    best: PersistentVolume | None = None
    for volume in volumes:
        if volume.metadata.deletion_timestamp is not None or volume.status.phase in ("Released", "Failed"):
            continue
        if volume.spec.claim_ref is not None:
            if claim_ref_matches(volume, claim) and _fits(volume, claim):
                return volume
            continue
        if not _fits(volume, claim):
            continue
        if best is None or (volume_capacity(volume), volume.metadata.name or "") < (
                volume_capacity(best), best.metadata.name or ""):
            best = volume
    return best
