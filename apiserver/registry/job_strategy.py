"""The strategy of batch/v1 Jobs: generated selectors, generation, validation.

Mirrors pkg/registry/batch/job/strategy.go. On create, unless spec.manualSelector is true,
the server generates the selector `batch.kubernetes.io/controller-uid=<uid>` and labels the
pod template with the Job's uid and name under both the current (`batch.kubernetes.io/...`)
and legacy (`controller-uid`, `job-name`) keys, so a Job's pods match exactly that Job;
labels the user set are kept, and validation rejects them if they conflict. Generation
tracks the spec; status is written only through `/status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from apiserver.registry.job_validation import validate_job, validate_job_update
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from kube.api.batch_v1 import CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL
from kube.errors import FieldError

__all__ = ["JobStrategy", "generate_selector"]


def generate_selector(obj: Obj) -> None:
    """generateSelector: template labels for the Job's name and uid, and a selector on its uid."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    spec.setdefault("manualSelector", False)
    template = spec.setdefault("template", {})
    if not isinstance(template, dict) or not isinstance(template.setdefault("metadata", {}), dict):
        return
    labels = template["metadata"].get("labels")
    if not isinstance(labels, dict):
        labels = template["metadata"]["labels"] = {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    for key, value in ((LEGACY_JOB_NAME_LABEL, name), (JOB_NAME_LABEL, name),
                       (LEGACY_CONTROLLER_UID_LABEL, uid), (CONTROLLER_UID_LABEL, uid)):
        labels.setdefault(key, value)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)


class JobStrategy(Strategy):
    tracks_generation = True
    selectable_fields: ClassVar[Mapping[str, str]] = {"status.successful": "status.succeeded"}

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        generate_selector(obj)

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        if not isinstance(obj.get("spec"), dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        return errs + validate_job(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta(new, namespaced=True)
        if not isinstance(new.get("spec"), dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        return errs + validate_job_update(new, old)
