"""A shared informer: one reflector feeding one indexed store and any number of handlers.

Mirrors client-go's SharedIndexInformer contract:
- handlers (`on_add`, `on_update(old, new)`, `on_delete`) run on the event loop in event
  order, must not block, and should only enqueue keys;
- after a relist, objects that disappeared are delivered as deletes and changed ones as
  updates, so handlers never miss a transition across a 410;
- `has_synced()` is True once the first full list is in the store; gate workers on it;
- with `resync_period`, every stored object is re-delivered as an update (old is new) that
  often, so level-triggered controllers re-check the world even without changes;
- handlers of a real change run under the trace context recorded on the object
  (`kube.tracing.woken_by`), so whatever they queue continues the trace of the write that
  made it; a resync carries none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

from kube.api.base import T_Object
from kube.cache.reflector import Reflector
from kube.cache.store import IndexFunc, Store
from kube.client.rest import RESTClient
from kube.clock import Clock, RealClock
from kube.tracing import object_ref, woken_by

__all__ = ["EventHandler", "SharedInformer"]

logger = logging.getLogger(__name__)


@dataclass
class EventHandler(Generic[T_Object]):
    on_add: Callable[[T_Object], None] | None = None
    on_update: Callable[[T_Object, T_Object], None] | None = None
    on_delete: Callable[[T_Object], None] | None = None


class SharedInformer(Generic[T_Object]):
    """A cache of one collection, kept current by list+watch."""

    def __init__(self, client: RESTClient, cls: type[T_Object], *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None,
                 resync_period: float | None = None, clock: Clock | None = None) -> None:
        self.cls = cls
        self.store: Store[T_Object] = Store()
        self._handlers: list[EventHandler[T_Object]] = []
        self._synced = asyncio.Event()
        self._resync_period = resync_period
        self._clock = clock or RealClock()
        self.reflector = Reflector(client, cls, self, namespace=namespace, label_selector=label_selector,
                                   field_selector=field_selector, clock=self._clock)

    def add_event_handler(self, handler: EventHandler[T_Object]) -> None:
        """Register handlers; objects already cached are delivered to it as adds right away."""
        self._handlers.append(handler)
        if handler.on_add and self.has_synced():
            for obj in self.store.list():
                handler.on_add(obj)

    def add_indexers(self, indexers: dict[str, IndexFunc[T_Object]]) -> None:
        self.store.add_indexers(indexers)

    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    @property
    def last_resource_version(self) -> str:
        return self.reflector.last_resource_version

    # --- ReflectorSink -------------------------------------------------------------------
    def replace(self, items: list[T_Object], resource_version: str) -> None:
        old = self.store.replace(items)
        for obj in items:
            prev = old.pop(obj.key, None)
            if prev is None:
                self._dispatch("ADDED", None, obj)
            # Each kind declares `metadata`; the KubeObject bound does not, hence getattr.
            elif getattr(prev, "metadata").resource_version != getattr(obj, "metadata").resource_version:  # noqa: B009
                self._dispatch("MODIFIED", prev, obj)
        for gone in old.values():
            self._dispatch("DELETED", gone, gone)
        self._synced.set()

    def on_event(self, type_: str, obj: T_Object) -> None:
        if type_ == "DELETED":
            old = self.store.delete(obj.key)
            self._dispatch("DELETED", old, obj)
            return
        old = self.store.upsert(obj)
        self._dispatch("ADDED" if old is None else "MODIFIED", old, obj)

    def forget(self, key: str) -> None:
        """A deletion whose final state did not decode: the last cached state goes to the handlers."""
        old = self.store.delete(key)
        if old is not None:
            self._dispatch("DELETED", old, old)

    def _dispatch(self, type_: str, old: T_Object | None, new: T_Object) -> None:
        if old is new:
            self._dispatch_to_handlers(type_, old, new)
            return
        meta = getattr(new, "metadata")  # noqa: B009 - each kind declares `metadata`, KubeObject does not
        with woken_by(meta.annotations, event=type_, obj=object_ref(self.cls.info.kind, meta.namespace, meta.name),
                      resource_version=meta.resource_version or ""):
            self._dispatch_to_handlers(type_, old, new)

    def _dispatch_to_handlers(self, type_: str, old: T_Object | None, new: T_Object) -> None:
        for h in self._handlers:
            try:
                if type_ == "ADDED" and h.on_add:
                    h.on_add(new)
                elif type_ == "MODIFIED" and h.on_update:
                    h.on_update(old if old is not None else new, new)
                elif type_ == "DELETED" and h.on_delete:
                    h.on_delete(new)
            except Exception:  # a handler bug must not kill the watch loop
                logger.exception("Event handler failed", extra={"resource": self.cls.info.plural})

    async def _resync_loop(self) -> None:
        assert self._resync_period
        while True:
            await self._clock.sleep(self._resync_period)
            for obj in self.store.list():
                self._dispatch("MODIFIED", obj, obj)

    async def run(self) -> None:
        """Run until cancelled."""
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self.reflector.run())
            if self._resync_period:
                tg.create_task(self._resync_loop())
