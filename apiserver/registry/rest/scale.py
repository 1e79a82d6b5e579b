"""The scale subresource: the autoscaling/v1 Scale view of a workload, reading and writing
`spec.replicas` only."""

from __future__ import annotations

from typing import Any

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj, UpdateFunc
from kube.errors import BadRequest, Invalid
from kube.selectors import format_label_selector, selector_from_label_selector

__all__ = ["ScaleStorage", "as_scale"]


def as_scale(obj: Obj) -> Obj:
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": spec.get("replicas", 1)},
            "status": {"replicas": status.get("replicas") or 0,
                       "selector": _selector_text(obj.get("kind"), spec.get("selector"))}}


def _selector_text(kind: object, selector: Any) -> str:
    """A LabelSelector's text form; a ReplicationController's plain label map is `k=v,...`."""
    if kind == "ReplicationController" and isinstance(selector, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return format_label_selector(selector_from_label_selector(selector))


def _invalid(name: str, replicas: object) -> Invalid:
    return Invalid(f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: {replicas}: must be '
                   "greater than or equal to 0",
                   details={"name": name, "group": "autoscaling", "kind": "Scale",
                            "causes": [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                        "message": "must be greater than or equal to 0"}]})


class ScaleStorage:
    kind = Kind("autoscaling", "v1", "Scale")

    def __init__(self, store: RegistryStore) -> None:
        self.store = store

    async def get(self, ctx: Context, name: str) -> Obj:
        return as_scale(await self.store.get(ctx.namespace, name))

    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        def rescale(obj: Obj) -> Obj:
            wanted = transform(as_scale(obj))
            if not isinstance(wanted, dict):
                raise BadRequest("the request body must be a Scale object")
            replicas = (wanted.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise _invalid(name, replicas)
            rv = (wanted.get("metadata") or {}).get("resourceVersion")
            obj.setdefault("spec", {})["replicas"] = replicas
            obj["metadata"]["resourceVersion"] = rv or obj["metadata"]["resourceVersion"]
            return obj

        updated = await self.store.patch(ctx.namespace, name, rescale, subresource="scale", dry_run=ctx.dry_run,
                                         manager=ctx.field_manager, admission=ctx.admission)
        return as_scale(updated), False
