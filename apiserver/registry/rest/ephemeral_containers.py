"""The pods/ephemeralcontainers subresource: the one way to add a debugging container to a pod.

Mirrors pkg/registry/core/pod/storage EphemeralContainersREST: GET answers the whole Pod,
PUT and PATCH (JSON, merge, strategic merge, as `kubectl debug` sends) write it through the
pods store with subresource `ephemeralcontainers`, whose strategy keeps everything of the
stored pod but `spec.ephemeralContainers` (see `PodStrategy.prepare_for_update`) and whose
validation (`ephemeral_validation`) allows ephemeral containers to be added only, never changed or removed. It is a
subresource of its own so that RBAC can grant it apart from pod updates: upstream's admin
and edit roles do not include it.
"""

from __future__ import annotations

from apiserver.registry.generic import RegistryStore
from apiserver.registry.kinds import EPHEMERAL_CONTAINERS
from apiserver.registry.rest.interfaces import Context, Kind, Obj, UpdateFunc

__all__ = ["EphemeralContainersStorage"]


class EphemeralContainersStorage:
    def __init__(self, store: RegistryStore) -> None:
        self.store = store
        self.kind = Kind(store.info.group, store.info.version, store.info.kind)

    async def get(self, ctx: Context, name: str) -> Obj:
        return await self.store.get(ctx.namespace, name)

    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        """Apply `transform` to the stored pod, keeping only its ephemeral containers; never creates."""
        obj = await self.store.patch(ctx.namespace, name, transform, subresource=EPHEMERAL_CONTAINERS,
                                     dry_run=ctx.dry_run, manager=ctx.field_manager, admission=ctx.admission)
        return obj, False
