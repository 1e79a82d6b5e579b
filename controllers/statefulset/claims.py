"""A StatefulSet pod's claims: one PersistentVolumeClaim per volumeClaimTemplate and ordinal.

Mirrors stateful_set_utils.go (getPersistentVolumeClaims, updateStorage) and
stateful_pod_control.go (createPersistentVolumeClaims):
- the claim of template T for the pod NAME-ORDINAL is `T-NAME-ORDINAL`, in the set's
  namespace, with the template's spec and labels plus the set's selector matchLabels;
- the pod gets a volume named T whose persistentVolumeClaim is that claim (replacing a
  template volume of the same name), so the pod and its claim stay paired across restarts;
- the claims are created before the pod, and never changed once they exist. Under the
  default retention policy (whenDeleted Retain) a claim has no owner, so it outlives the set;
  with whenDeleted Delete it is owned by the set (not as its controller), so the garbage
  collector deletes it with the set;
- with whenScaled Delete, the claims of a pod removed by a scale-down are owned by that pod
  just before it is deleted (`pod_owner_patch`), so they go with it.
"""

from __future__ import annotations

import copy
from typing import Any

from kube.api import OwnerReference, PersistentVolumeClaim, Pod, StatefulSet

__all__ = ["claim_name", "claim_names", "new_claims", "pod_owner_patch", "with_claim_volumes"]


def _templates(sts: StatefulSet) -> list[dict[str, Any]]:
    return [t for t in sts.spec.volume_claim_templates or [] if isinstance(t, dict)
            and (t.get("metadata") or {}).get("name")]


def claim_name(template_name: str, sts: StatefulSet, ordinal: int) -> str:
    return f"{template_name}-{sts.metadata.name}-{ordinal}"


def claim_names(sts: StatefulSet, ordinal: int) -> list[str]:
    return [claim_name(str(t["metadata"]["name"]), sts, ordinal) for t in _templates(sts)]


def pod_owner_patch(claim: PersistentVolumeClaim, pod: Pod) -> dict[str, Any] | None:
    """The merge patch that makes `pod` an owner of `claim`, or None when it already is."""
    refs = list(claim.metadata.owner_references or [])
    if any(r.uid == pod.metadata.uid for r in refs):
        return None
    refs.append(OwnerReference(api_version="v1", kind="Pod", name=str(pod.metadata.name), uid=str(pod.metadata.uid)))
    return {"metadata": {"resourceVersion": claim.metadata.resource_version,
                         "ownerReferences": [r.to_dict() for r in refs]}}


def new_claims(sts: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """The claims the pod with `ordinal` needs, as they are created."""
    match_labels = dict(sts.spec.selector.match_labels or {})
    policy = sts.spec.persistent_volume_claim_retention_policy
    owned = policy is not None and policy.when_deleted == "Delete"
    claims = []
    for template in _templates(sts):
        meta = copy.deepcopy(template.get("metadata") or {})
        meta.update(name=claim_name(meta["name"], sts, ordinal), namespace=sts.metadata.namespace,
                    labels={**(meta.get("labels") or {}), **match_labels})
        for field in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences"):
            meta.pop(field, None)
        claim = PersistentVolumeClaim.model_validate({"metadata": meta, "spec": copy.deepcopy(template.get("spec")
                                                                                          or {})})
        if owned:
            claim.metadata.owner_references = [OwnerReference(
                api_version="apps/v1", kind="StatefulSet", name=str(sts.metadata.name), uid=str(sts.metadata.uid))]
        claims.append(claim)
    return claims


def with_claim_volumes(pod: Pod, sts: StatefulSet, ordinal: int) -> Pod:
    """`pod` with a persistentVolumeClaim volume per template (same-named volumes replaced)."""
    templates = [str(t["metadata"]["name"]) for t in _templates(sts)]
    if not templates:
        return pod
    body = pod.to_dict()
    spec = body.setdefault("spec", {})
    volumes = [v for v in spec.get("volumes") or [] if v.get("name") not in templates]
    volumes += [{"name": t, "persistentVolumeClaim": {"claimName": claim_name(t, sts, ordinal)}} for t in templates]
    spec["volumes"] = volumes
    return Pod.model_validate(body)
