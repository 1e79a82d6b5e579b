"""The garbage collector: dependents follow their owners, as ownerReferences say.

Mirrors pkg/controller/garbagecollector, reduced to a uid-keyed work queue over informers
of every kind that can own or be owned. The kinds other controllers read (Deployments,
ReplicaSets, Pods, ConfigMaps, Secrets, ServiceAccounts, Nodes, Leases) come from the
shared informer factory; every other resource discovery lists with the list, watch and
delete verbs (custom resources included) gets a dynamic informer of the GC's own, as
upstream's GraphBuilder keeps its monitors: discovery is read again every few seconds,
so monitors start when a CRD's kind is served and stop when it goes. Events are never
monitored (upstream ignores them too).
- background: an object all of whose owners are gone is deleted (propagation Background,
  with its uid as a precondition). "Gone" is confirmed with a live GET of each owner by
  kind and name (a custom kind is found through discovery), comparing uids, never from a
  possibly lagging cache. This also collects
  dependents whose owner vanished while the controller-manager was down: the first list
  queues every object;
- orphan: an owner being deleted with the `orphan` finalizer has its uid removed from every
  dependent's ownerReferences, then loses the finalizer;
- foreground: an owner being deleted with `foregroundDeletion` has its dependents deleted;
  once none with `blockOwnerDeletion: true` remains, it loses the finalizer and goes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.context import ControllerContext
from kube.api import (
    ConfigMap,
    Deployment,
    KubeObject,
    Lease,
    Node,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
    Secret,
    ServiceAccount,
    dynamic_model,
)
from kube.cache import EventHandler, SharedInformer
from kube.client.discovery import discover
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.resources import ResourceInfo, resource_for_kind
from kube.workqueue import WorkQueue

__all__ = ["GarbageCollector", "ORPHAN", "FOREGROUND"]

logger = logging.getLogger(__name__)

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
_KINDS: tuple[type[KubeObject], ...] = (Deployment, ReplicaSet, Pod, ConfigMap, Secret, ServiceAccount, Node, Lease)
_RECHECK = 1.0
_DISCOVERY_PERIOD = 3.0
"""Seconds between reads of discovery (upstream resyncs its monitors every 30 s)."""
_IGNORED = {("", "events"), ("events.k8s.io", "events")}


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _meta(obj: KubeObject) -> ObjectMeta:
    return obj.metadata


class GarbageCollector:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.queue: WorkQueue[str] = WorkQueue(name="garbagecollector", clock=ctx.clock)
        self.informers: list[SharedInformer[Any]] = []
        self._shared = {(cls.info.group, cls.info.plural) for cls in _KINDS}
        self._monitors: dict[tuple[str, str], tuple[SharedInformer[Any], asyncio.Task[None]]] = {}
        for cls in _KINDS:
            self._watch(ctx.informers.informer_for(cls))

    def _watch(self, informer: SharedInformer[Any]) -> None:
        informer.add_indexers({"uid": lambda o: [str(_meta(o).uid)],
                               "owner": lambda o: [r.uid for r in _meta(o).owner_references or []]})
        informer.add_event_handler(EventHandler(on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n),
                                                on_delete=self._on_delete))
        self.informers.append(informer)

    def _enqueue(self, obj: KubeObject) -> None:
        self.queue.add(str(_meta(obj).uid))

    def _on_delete(self, obj: KubeObject) -> None:
        # The owner is gone: look at each of its dependents.
        for dep in self.dependents(str(_meta(obj).uid)):
            self.queue.add(str(_meta(dep).uid))

    async def run(self) -> None:
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._sync_monitors(tg))
                await run_workers("garbagecollector", self.queue, self.reconcile, workers=4)
        finally:
            await self.queue.shut_down()

    # --- monitors of the kinds discovery lists ----------------------------------------------
    async def _sync_monitors(self, tg: asyncio.TaskGroup) -> None:
        """Keep one dynamic informer per deletable resource discovery lists; until cancelled."""
        while True:
            try:
                mapper = await discover(self.client)
            except Exception as e:  # noqa: BLE001 - a failed discovery is retried next period
                logger.warning("Discovery failed, monitors unchanged", extra={"error": repr(e)})
            else:
                self._resync_monitors(tg, [r for r in mapper.preferred()
                                           if {"list", "watch", "delete"} <= set(r.verbs)])
            await asyncio.sleep(_DISCOVERY_PERIOD)

    def _resync_monitors(self, tg: asyncio.TaskGroup, resources: list[ResourceInfo]) -> None:
        wanted = {(r.group, r.plural): r for r in resources
                  if (r.group, r.plural) not in self._shared and (r.group, r.plural) not in _IGNORED}
        for key in [k for k, (informer, _) in self._monitors.items() if wanted.get(k) != informer.cls.info]:
            informer, task = self._monitors.pop(key)
            task.cancel()
            self.informers.remove(informer)
            logger.info("Monitor stopped", extra={"resource": informer.cls.info.qualified})
        for key, info in wanted.items():
            if key not in self._monitors:
                informer = SharedInformer(self.client, dynamic_model(info))
                self._watch(informer)
                self._monitors[key] = (informer, tg.create_task(self._run_monitor(informer),
                                                                name=f"gc-monitor-{info.qualified}"))
                logger.info("Monitor started", extra={"resource": info.qualified})

    async def _run_monitor(self, informer: SharedInformer[Any]) -> None:
        """Run a new monitor; once synced, recheck every dependent of its kind.

        An owner of a kind not yet monitored may have gone before its monitor listed it, so
        no delete event will ever name its dependents: look at them all once.
        """
        async with asyncio.TaskGroup() as tg:
            tg.create_task(informer.run())
            await informer.wait_for_sync()
            info = informer.cls.info
            for other in list(self.informers):
                for obj in other.store.list():
                    if any(r.kind == info.kind and _group(r.api_version) == info.group
                           for r in _meta(obj).owner_references or []):
                        self._enqueue(obj)

    # --- lookups -------------------------------------------------------------------------
    def find(self, uid: str) -> KubeObject | None:
        for informer in self.informers:
            found = informer.store.by_index("uid", uid)
            if found:
                return found[0]  # type: ignore[no-any-return]
        return None

    def dependents(self, uid: str) -> list[KubeObject]:
        return [d for informer in self.informers for d in informer.store.by_index("owner", uid)]

    async def owner_exists(self, ref: OwnerReference, namespace: str | None) -> bool:
        """Live check: does the object `ref` names exist with `ref.uid`?"""
        info = resource_for_kind(ref.api_version, ref.kind) or await self._custom_kind(ref.api_version, ref.kind)
        if info is None:
            return True  # a kind the server does not serve: never collect on its behalf
        try:
            raw = await self.client.get_raw(info, ref.name, namespace if info.namespaced else None)
        except NotFound:
            return False
        return str((raw.get("metadata") or {}).get("uid")) == ref.uid

    async def _custom_kind(self, api_version: str, kind: str) -> ResourceInfo | None:
        """A kind beyond the built-in ones (a custom resource), as discovery lists it now."""
        mapper = await discover(self.client)
        return mapper.kind_for(api_version, kind)

    # --- the reconcile -------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result | None:
        uid = request.name
        obj = self.find(uid)
        if obj is None:
            return None
        meta = _meta(obj)
        finalizers = meta.finalizers or []
        if meta.deletion_timestamp and ORPHAN in finalizers:
            return await self._orphan_dependents(obj)
        if meta.deletion_timestamp and FOREGROUND in finalizers:
            return await self._delete_dependents(obj)
        refs = meta.owner_references or []
        if refs and not meta.deletion_timestamp:
            for ref in refs:
                if self.find(ref.uid) is not None or await self.owner_exists(ref, meta.namespace):
                    return None
            info = type(obj).info
            logger.info("Deleting object whose owners are all gone",
                        extra={"kind": info.kind, "object": obj.key, "owners": ",".join(r.name for r in refs)})
            try:
                await self.client.delete_raw(info, str(meta.name), meta.namespace, propagation_policy="Background",
                                             preconditions={"uid": uid})
            except (NotFound, Conflict):
                pass
        return None

    async def _orphan_dependents(self, owner: KubeObject) -> Result | None:
        uid = str(_meta(owner).uid)
        for dep in self.dependents(uid):
            dmeta = _meta(dep)
            kept = [r.to_dict() for r in dmeta.owner_references or [] if r.uid != uid]
            patch = {"metadata": {"ownerReferences": kept or None, "uid": dmeta.uid}}
            try:
                await self.client.patch_raw(type(dep).info, str(dmeta.name), patch, dmeta.namespace)
            except NotFound:
                pass
        await self._remove_finalizer(owner, ORPHAN)
        return None

    async def _delete_dependents(self, owner: KubeObject) -> Result | None:
        uid = str(_meta(owner).uid)
        blocking = 0
        for dep in self.dependents(uid):
            dmeta = _meta(dep)
            ref = next((r for r in dmeta.owner_references or [] if r.uid == uid), None)
            if ref is not None and ref.block_owner_deletion:
                blocking += 1
            if not dmeta.deletion_timestamp:
                try:
                    await self.client.delete_raw(type(dep).info, str(dmeta.name), dmeta.namespace,
                                                 propagation_policy="Foreground")
                except NotFound:
                    pass
        if blocking:
            return Result(requeue_after=_RECHECK)
        await self._remove_finalizer(owner, FOREGROUND)
        return None

    async def _remove_finalizer(self, obj: KubeObject, finalizer: str) -> None:
        meta = _meta(obj)
        info = type(obj).info
        try:
            live = await self.client.get_raw(info, str(meta.name), meta.namespace)
        except NotFound:
            return
        finalizers = [f for f in (live.get("metadata") or {}).get("finalizers") or [] if f != finalizer]
        patch = {"metadata": {"finalizers": finalizers or None,
                              "resourceVersion": live["metadata"]["resourceVersion"]}}
        await self.client.patch_raw(info, str(meta.name), patch, meta.namespace)
        logger.info("Finalizer removed", extra={"object": obj.key, "finalizer": finalizer})


