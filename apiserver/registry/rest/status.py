"""The status, approval and finalize subresources: writes that may change one part of the object only.

What each may change is the kind's strategy's rule (`prepare_for_update` with the
subresource): status keeps everything but `status`, finalize everything but
`spec.finalizers`. Upstream serves finalize for update only.
"""

from __future__ import annotations

from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj, UpdateFunc

__all__ = ["StatusStorage", "FinalizeStorage"]


class FinalizeStorage:
    def __init__(self, store: RegistryStore, subresource: str = "finalize") -> None:
        self.store, self.subresource = store, subresource
        self.kind = Kind(store.info.group, store.info.version, store.info.kind)

    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        obj = await self.store.patch(ctx.namespace, name, transform, subresource=self.subresource,
                                     dry_run=ctx.dry_run, manager=ctx.field_manager, admission=ctx.admission)
        return obj, False


class StatusStorage(FinalizeStorage):
    """`status`, or another subresource read as the whole object (a CSR's `approval`)."""

    def __init__(self, store: RegistryStore, subresource: str = "status") -> None:
        super().__init__(store, subresource)

    async def get(self, ctx: Context, name: str) -> Obj:
        return await self.store.get(ctx.namespace, name)
