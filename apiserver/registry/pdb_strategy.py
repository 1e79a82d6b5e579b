"""The PodDisruptionBudget strategy: generation follows the spec, status starts empty.

Mirrors pkg/registry/policy/poddisruptionbudget/strategy.go: a new budget's status is
reset (the disruption controller fills it and reports the generation it saw in
`status.observedGeneration`, which the Eviction API compares with `metadata.generation`),
spec changes bump the generation, and `/status` writes are checked for negative counters.
"""

from __future__ import annotations

from apiserver.registry.pdb_validation import validate_pdb_spec, validate_pdb_status
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from kube.errors import FieldError

__all__ = ["PodDisruptionBudgetStrategy"]


class PodDisruptionBudgetStrategy(Strategy):
    tracks_generation = True

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def spec_of(self, obj: Obj) -> object:
        return obj.get("spec")

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        return errs + validate_pdb_spec(spec if isinstance(spec, dict) else {})

    def validate_subresource_update(self, new: Obj, old: Obj, *, subresource: str) -> list[FieldError]:
        errs = super().validate_subresource_update(new, old, subresource=subresource)
        status = new.get("status")
        if subresource == "status" and isinstance(status, dict):
            errs += validate_pdb_status(status)
        return errs
