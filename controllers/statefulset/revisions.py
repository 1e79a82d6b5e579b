"""A StatefulSet's history: ControllerRevisions holding the templates it has had.

Mirrors pkg/controller/history and the revision helpers of stateful_set_utils.go:
- a revision's `data` is the patch that restores the set's template,
  `{"spec": {"template": {..., "$patch": "replace"}}}`;
- its name is `<set>-<hash>`, the hash being FNV-1a of that data (and the set's
  collisionCount, when set) encoded as the Deployment controller encodes pod-template-hash;
  it carries the template's labels plus `controller.kubernetes.io/hash`, and is controlled by
  the set, so `kubectl rollout history sts/x` finds it by the set's selector and uid;
- revisions are numbered; the update revision is the existing one whose data equals the
  set's template (renumbered to be the newest) or a new one numbered after the newest.
Pure functions; the controller does the writes.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from controllers.common.owner import new_controller_ref
from controllers.deployment.util import fnv32a, safe_encode_string
from kube.api import ObjectMeta, PodTemplateSpec, StatefulSet
from kube.api.apps_v1_daemonset import ControllerRevision

__all__ = ["HASH_LABEL", "equal_data", "new_revision", "revision_data", "template_of"]

HASH_LABEL = "controller.kubernetes.io/hash"


def revision_data(sts: StatefulSet) -> dict[str, Any]:
    template = sts.spec.template.to_dict()
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def _hash(data: dict[str, Any], collision_count: int | None) -> str:
    h = fnv32a(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
    if collision_count is not None:
        h = fnv32a(struct.pack("<II", collision_count & 0xFFFFFFFF, 0), h)
    return safe_encode_string(str(h))


def new_revision(sts: StatefulSet, number: int, collision_count: int | None) -> ControllerRevision:
    data = revision_data(sts)
    digest = _hash(data, collision_count)
    labels = {**(sts.spec.template.metadata.labels or {}), HASH_LABEL: digest}
    meta = ObjectMeta(name=f"{sts.metadata.name}-{digest}", namespace=sts.metadata.namespace, labels=labels,
                      annotations=dict(sts.metadata.annotations or {}) or None,
                      owner_references=[new_controller_ref(sts)])
    return ControllerRevision(metadata=meta, data=data, revision=number)


def equal_data(a: ControllerRevision, b: ControllerRevision) -> bool:
    return a.data == b.data


def template_of(revision: ControllerRevision, fallback: PodTemplateSpec) -> PodTemplateSpec:
    """The template a revision restores (`fallback` when its data holds none)."""
    template = ((revision.data or {}).get("spec") or {}).get("template")
    if not isinstance(template, dict):
        return fallback
    return PodTemplateSpec.model_validate({k: v for k, v in template.items() if k != "$patch"})
