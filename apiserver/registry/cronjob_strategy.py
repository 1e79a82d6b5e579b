"""The strategy of batch/v1 CronJobs: generation, validation; status only through `/status`.

Mirrors pkg/registry/batch/cronjob/strategy.go: generation tracks the spec, a new CronJob
starts with an empty status, and the spec is validated as pkg/apis/batch/validation does.
"""

from __future__ import annotations

from apiserver.registry.cronjob_validation import validate_cronjob, validate_cronjob_update
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from kube.errors import FieldError

__all__ = ["CronJobStrategy"]


class CronJobStrategy(Strategy):
    tracks_generation = True

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        if not isinstance(obj.get("spec"), dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        return errs + validate_cronjob(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = validate_object_meta(new, namespaced=True)
        if not isinstance(new.get("spec"), dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        return errs + validate_cronjob_update(new, old)
