"""The Service store: the generic store, taking cluster IPs and node ports around each write.

Mirrors the service REST storage of pkg/registry/core/service/storage (its BeginCreate,
BeginUpdate and AfterDelete hooks): after a Service is validated its addresses are taken
from the allocators (filling in `clusterIP`, `clusterIPs` and `nodePort`), the write is
stored, and the addresses are kept (commit) or given back (revert); once a Service is gone
from storage, what it held is given back. A request the allocators cannot honour is a 422
naming the field, as upstream answers.
"""

from __future__ import annotations

from apiserver.registry.generic import RegistryStore, WriteTransaction
from apiserver.registry.service.allocation import AllocationError, ServiceAllocators
from apiserver.registry.strategy import Obj, Strategy
from apiserver.storage.interface import Storage
from kube.resources import ResourceInfo

__all__ = ["ServiceRegistryStore"]


class ServiceRegistryStore(RegistryStore):
    def __init__(self, storage: Storage, info: ResourceInfo, strategy: Strategy, *, allocators: ServiceAllocators,
                 prefix: str = "/registry", max_object_bytes: int = 1536 * 1024) -> None:
        super().__init__(storage, info, strategy, prefix=prefix, max_object_bytes=max_object_bytes)
        self.allocators = allocators

    def _name(self, obj: Obj) -> str:
        return str((obj.get("metadata") or {}).get("name") or "")

    async def begin_create(self, obj: Obj, *, dry_run: bool) -> WriteTransaction:
        try:
            return await self.allocators.allocate_create(obj, dry_run=dry_run)
        except AllocationError as e:
            raise self.invalid(self._name(obj), e.errors) from None

    async def begin_update(self, new: Obj, old: Obj, *, dry_run: bool) -> WriteTransaction:
        try:
            return await self.allocators.allocate_update(new, old, dry_run=dry_run)
        except AllocationError as e:
            raise self.invalid(self._name(new), e.errors) from None

    async def after_remove(self, obj: Obj) -> None:
        await self.allocators.release(obj)
