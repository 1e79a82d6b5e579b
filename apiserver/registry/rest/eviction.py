"""pods/eviction: delete the pod as an Eviction asks (no disruption budgets are served yet)."""

from __future__ import annotations

from apiserver.registry.generic import DeleteOptions, RegistryStore
from apiserver.registry.rest._status import success
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest

__all__ = ["EvictionStorage"]


class EvictionStorage:
    kind = Kind("policy", "v1", "Eviction")

    def __init__(self, pods: RegistryStore) -> None:
        self.pods = pods

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        if name is None:
            raise BadRequest("an eviction names its pod")
        opts = obj.get("deleteOptions") or {}
        if not isinstance(opts, dict):
            raise BadRequest("deleteOptions must be an object")
        pre = opts.get("preconditions") or {}
        await self.pods.delete(ctx.namespace, name, DeleteOptions(
            grace_period_seconds=opts.get("gracePeriodSeconds"), propagation_policy=opts.get("propagationPolicy"),
            precondition_uid=pre.get("uid"), precondition_resource_version=pre.get("resourceVersion"),
            dry_run=ctx.dry_run), admission=ctx.admission)
        return success()
