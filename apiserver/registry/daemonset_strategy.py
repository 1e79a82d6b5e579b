"""The strategies of DaemonSets and ControllerRevisions.

DaemonSets: generation tracks the spec (the controller reports observedGeneration against
it), status starts empty and is written only through `/status`, validation is
`daemonset_validation`'s. As upstream's strategy, the template generation (in apps/v1 the
annotation `deprecated.daemonset.template.generation`) starts at 1 and goes up by one
whenever an update changes the pod template. ControllerRevisions are plain namespaced objects whose data,
once written, never changes (see `validate_controller_revision_update`).
"""

from __future__ import annotations

from apiserver.registry.daemonset_validation import (
    validate_controller_revision,
    validate_controller_revision_update,
    validate_daemonset_spec,
    validate_daemonset_update,
)
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from apiserver.validation.field import required
from kube.errors import FieldError

__all__ = ["TEMPLATE_GENERATION_ANNOTATION", "ControllerRevisionStrategy", "DaemonSetStrategy"]

TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"


def _set_template_generation(obj: Obj, generation: int) -> None:
    meta = obj.setdefault("metadata", {})
    if isinstance(meta, dict):
        annotations = meta.get("annotations")
        kept: Obj = annotations if isinstance(annotations, dict) else {}
        meta["annotations"] = {**kept, TEMPLATE_GENERATION_ANNOTATION: str(generation)}


def _template_generation(obj: Obj) -> int:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    return int(value) if isinstance(value, str) and value.isdigit() else 0


class DaemonSetStrategy(Strategy):
    tracks_generation = True

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        _set_template_generation(obj, 1)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        super().prepare_for_update(new, old, subresource=subresource)
        if subresource is not None:
            return
        generation = max(1, _template_generation(old))
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
        _set_template_generation(new, generation)

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                         "numberReady": 0}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [*errs, required("spec")]
        return errs + validate_daemonset_spec(spec)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate_kind(new) + validate_daemonset_update(new, old)


class ControllerRevisionStrategy(Strategy):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return super().validate_kind(obj) + validate_controller_revision(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate_kind(new) + validate_controller_revision_update(new, old)
