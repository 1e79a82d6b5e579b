"""The strategies of DaemonSets and ControllerRevisions.

DaemonSets: generation tracks the spec (the controller reports observedGeneration against
it), status starts empty and is written only through `/status`, validation is
`daemonset_validation`'s. ControllerRevisions are plain namespaced objects whose data,
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

__all__ = ["ControllerRevisionStrategy", "DaemonSetStrategy"]


class DaemonSetStrategy(Strategy):
    tracks_generation = True

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
