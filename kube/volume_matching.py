"""Which volume a claim may bind to: upstream's FindMatchingVolume, as pure functions.

Shared by the PV controller (which binds) and the scheduler's VolumeBinding (which checks
that a node has a volume to bind). Mirrors pkg/controller/volume/persistentvolume/index.go
and pkg/volume/util's FindMatchingVolume: a volume matches a claim when
- it is not being deleted, not Released or Failed, and not bound to another claim (a volume
  whose claimRef names this claim, by namespace, name and, when set, uid, matches at once:
  the claim was pre-bound);
- it is of the claim's class (`spec.storageClassName`, "" for none), has the claim's volume
  mode, offers every access mode the claim asks for, and at least the storage it requests;
- its labels match the claim's selector;
- when a node is given (the claim's selected node), its required node affinity admits it.
Of the matches the smallest volume wins (ties: the name), so big volumes stay for big claims.
A volume pre-bound to a claim wins regardless of size.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from kube.api import Node, NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim
from kube.quantity import parse_quantity
from kube.selectors import selector_from_label_selector

__all__ = ["claim_request", "volume_capacity", "find_matching_volume", "claim_ref_matches", "is_pre_bound_to",
           "volume_allows_node", "volume_mismatch"]


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


def _requirement_matches(req: NodeSelectorRequirement, values: dict[str, str]) -> bool:
    have = values.get(req.key)
    wanted = req.values or []
    if req.operator == "In":
        return have is not None and have in wanted
    if req.operator == "NotIn":
        return have is None or have not in wanted
    if req.operator == "Exists":
        return have is not None
    if req.operator == "DoesNotExist":
        return have is None
    if req.operator in ("Gt", "Lt") and have is not None and len(wanted) == 1:
        try:
            return int(have) > int(wanted[0]) if req.operator == "Gt" else int(have) < int(wanted[0])
        except ValueError:
            return False
    return False


def volume_allows_node(volume: PersistentVolume, node: Node) -> bool:
    """The volume's required node affinity admits `node` (a volume without one admits every node)."""
    required = volume.spec.node_affinity.required if volume.spec.node_affinity is not None else None
    if required is None:
        return True
    labels = dict(node.metadata.labels or {})
    fields = {"metadata.name": node.metadata.name or ""}
    for term in required.node_selector_terms:
        expressions, node_fields = term.match_expressions or [], term.match_fields or []
        if (expressions or node_fields) and all(_requirement_matches(r, labels) for r in expressions) and \
                all(_requirement_matches(r, fields) for r in node_fields):
            return True
    return False


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


def volume_mismatch(volume: PersistentVolume, claim: PersistentVolumeClaim) -> str | None:
    """Why a claim that names `volume` cannot bind to it (upstream's checkVolumeSatisfyClaim), or None."""
    if volume_capacity(volume) < claim_request(claim):
        return "requested PV is too small"
    if (volume.spec.storage_class_name or "") != (claim.spec.storage_class_name or ""):
        return "storageClassName does not match"
    if (volume.spec.volume_mode or "Filesystem") != (claim.spec.volume_mode or "Filesystem"):
        return "incompatible volumeMode"
    if not set(claim.spec.access_modes or []) <= set(volume.spec.access_modes or []):
        return "incompatible accessMode"
    return None


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume], *,
                         node: Node | None = None) -> PersistentVolume | None:
    """The volume `claim` should bind to (on `node`, when given), or None; pure, safe to call concurrently."""
    best: PersistentVolume | None = None
    for volume in volumes:
        if volume.metadata.deletion_timestamp is not None or volume.status.phase in ("Released", "Failed"):
            continue
        if node is not None and not volume_allows_node(volume, node):
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
