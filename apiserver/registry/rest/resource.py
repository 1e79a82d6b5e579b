"""The main resource of a stored kind: every verb, on top of the generic registry store.

Mirrors apiserver's registry/generic/registry.Store as a REST storage. The request's
namespace is already resolved by the router (None for cluster-scoped kinds and for lists
across namespaces). A delete that removes the object at once answers, as upstream, with a
`Status{status: Success}` naming it (name, group, kind = the resource, uid), except for the
kinds whose upstream storage sets ReturnDeletedObject (pods, namespaces, serviceaccounts,
resourcequotas), which answer with the object; a delete still pending (grace period,
finalizers) answers with the object as marked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from apiserver.registry.generic import DeleteOptions, ListOptions, RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj, UpdateFunc
from apiserver.registry.watch_event import WatchEvent
from kube.errors import NotFound, status_details

__all__ = ["ResourceStorage", "RETURNS_DELETED_OBJECT"]

RETURNS_DELETED_OBJECT = frozenset({("", "pods"), ("", "namespaces"), ("", "serviceaccounts"), ("", "resourcequotas"),
                                    ("", "services")})
"""(group, resource) whose immediate delete answers with the object (upstream ReturnDeletedObject)."""


class ResourceStorage:
    def __init__(self, store: RegistryStore, *, return_deleted_object: bool | None = None) -> None:
        self.store = store
        self.kind = Kind(store.info.group, store.info.version, store.info.kind)
        self.return_deleted_object = (store.info.group, store.info.plural) in RETURNS_DELETED_OBJECT \
            if return_deleted_object is None else return_deleted_object

    async def get(self, ctx: Context, name: str) -> Obj:
        return await self.store.get(ctx.namespace, name)

    async def list(self, ctx: Context, opts: ListOptions) -> Obj:
        return await self.store.list(ctx.namespace, opts)

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        return await self.store.create(ctx.namespace, obj, dry_run=ctx.dry_run, manager=ctx.field_manager,
                                       admission=ctx.admission)

    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        try:
            obj = await self.store.patch(ctx.namespace, name, transform, dry_run=ctx.dry_run,
                                         manager=ctx.field_manager, admission=ctx.admission)
            return obj, False
        except NotFound:
            if not allow_create:
                raise
        created = await self.store.create(ctx.namespace, transform(None), dry_run=ctx.dry_run,
                                          manager=ctx.field_manager, admission=ctx.admission)
        return created, True

    async def delete(self, ctx: Context, name: str, opts: DeleteOptions) -> tuple[Obj, bool]:
        obj, deleted = await self.store.delete(ctx.namespace, name, opts, admission=ctx.admission)
        if not deleted or self.return_deleted_object:
            return obj, deleted
        meta = obj.get("metadata") or {}
        details = {"name": meta.get("name", name), "group": self.store.info.group, "kind": self.store.info.plural,
                   "uid": meta.get("uid")}
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": status_details(details)}, True

    async def delete_collection(self, ctx: Context, opts: DeleteOptions, list_opts: ListOptions) -> Obj:
        """Delete every object the selectors match; the list of what was matched."""
        listed = await self.store.list(ctx.namespace, list_opts)
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                await self.store.delete(meta.get("namespace"), meta["name"], opts, admission=ctx.admission)
            except NotFound:
                pass
        return listed

    async def watch(self, ctx: Context, opts: ListOptions, *, allow_bookmarks: bool) -> AsyncIterator[WatchEvent]:
        return await self.store.open_watch(ctx.namespace, opts, allow_bookmarks=allow_bookmarks)
