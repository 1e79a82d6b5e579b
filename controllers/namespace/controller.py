"""The namespace controller: a deleted namespace empties itself, then goes.

Mirrors pkg/controller/namespace's NamespacedResourcesDeleter, reduced:
- the API server marks a deleted namespace (deletionTimestamp, phase Terminating) and keeps
  it while `spec.finalizers` holds `kubernetes`;
- this controller deletes every object of every namespaced resource the server serves (as
  discovery lists them, so custom resources too) in it (background
  propagation; pods bound to a node wait for their kubelet), requeues while any remain,
  and, once all are gone, removes `kubernetes` through the `namespaces/<name>/finalize`
  subresource, at which point the API server removes the namespace;
- every step is idempotent and re-read from the API, so a restart mid-way simply resumes.
"""

from __future__ import annotations

import logging

from controllers.context import ControllerContext
from kube.api import Namespace
from kube.cache import EventHandler
from kube.client import RESTClient
from kube.client.discovery import discover
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.resources import ResourceInfo
from kube.workqueue import WorkQueue

__all__ = ["NamespaceController", "FINALIZER"]

logger = logging.getLogger(__name__)

FINALIZER = "kubernetes"
_RECHECK = 1.0


async def _namespaced_resources(client: RESTClient) -> list[ResourceInfo]:
    """Every namespaced resource the server serves now (custom resources included), in its preferred version."""
    mapper = await discover(client)
    return [r for r in mapper.preferred() if r.namespaced and "list" in r.verbs and "delete" in r.verbs]


class NamespaceController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.namespaces = ctx.informers.informer_for(Namespace)
        self.queue: WorkQueue[str] = WorkQueue(name="namespace", clock=ctx.clock)
        self.namespaces.add_event_handler(EventHandler(on_add=self._on_change,
                                                       on_update=lambda _old, ns: self._on_change(ns)))

    def _on_change(self, ns: Namespace) -> None:
        """Only a namespace being deleted has work to do."""
        if ns.metadata.deletion_timestamp:
            self.queue.add(str(ns.metadata.name))

    async def run(self) -> None:
        try:
            await run_workers("namespace", self.queue, self.reconcile, workers=2, kind="Namespace")
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        name = request.name
        try:
            ns = await self.client.get_raw(Namespace.info, name)
        except NotFound:
            return None
        if not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return None
        finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
        if FINALIZER not in finalizers:
            return None
        remaining = 0
        for info in await _namespaced_resources(self.client):
            try:
                listed = await self.client.list_raw(info, name)
            except NotFound:
                continue
            for item in listed.get("items") or []:
                remaining += 1
                meta = item.get("metadata") or {}
                if meta.get("deletionTimestamp"):
                    continue
                try:
                    await self.client.delete_raw(info, str(meta.get("name")), name, propagation_policy="Background")
                except NotFound:
                    pass
        if remaining:
            logger.debug("Namespace content still being deleted", extra={"namespace": name, "remaining": remaining})
            return Result(requeue_after=_RECHECK)
        body = {**ns, "spec": {**(ns.get("spec") or {}), "finalizers": [f for f in finalizers if f != FINALIZER]}}
        try:
            await self.client.replace_raw(Namespace.info, body, name=name, subresource="finalize")
        except NotFound:
            return None
        except Conflict:
            return Result(requeue_after=_RECHECK)
        logger.info("Namespace finalized", extra={"namespace": name})
        return None
