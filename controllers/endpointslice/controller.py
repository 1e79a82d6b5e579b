"""The EndpointSlice controller: the discovery.k8s.io/v1 EndpointSlices of every Service with a selector.

Mirrors pkg/controller/endpointslice/endpointslice_controller.go. Informers on Services,
Pods, Nodes and EndpointSlices; Pod events map to the Services of the pod's namespace
that select it (old and new labels on a relabel), slice events to the Service named by
their `kubernetes.io/service-name` label when the change is not this controller's own.

`reconcile` is level-triggered and safe to run twice or after a restart:
1. a Service gone: forget its slices (the garbage collector deletes them through their
   owner reference); ExternalName Services and Services without a selector are left
   alone (their slices, if any, are someone else's);
2. read the pods it selects and the slices managed by this controller for it; if the cache
   has not caught up with this controller's last writes, look again shortly;
3. plan the writes (`reconciler.plan_slices`) and make them: creates (not while the
   Service is being deleted), updates carrying the resourceVersion read, deletes.
Guarantee: when the slices already match the pods, a reconcile writes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.common.endpoints import queue_services_on_changes, selector_matches, service_selector
from controllers.common.errors import is_namespace_terminating
from controllers.context import ControllerContext
from controllers.endpointslice.desired import CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME
from controllers.endpointslice.reconciler import SlicePlan, plan_slices
from controllers.endpointslice.tracker import EndpointSliceTracker
from kube.api import EndpointSlice, Node, Pod, Service
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import ApiError, Forbidden, NotFound
from kube.events import EVENT_WARNING, EventRecorder
from kube.workqueue import WorkQueue

__all__ = ["EndpointSliceController"]

logger = logging.getLogger(__name__)

STALE_CACHE_RETRY = 0.1
"""Seconds to wait for the slice cache to show this controller's own writes."""
SLICE_CHANGE_DELAY = 1.0
"""Someone else's slice change is looked at after this long, batching bursts (upstream's 1s)."""


class EndpointSliceController:
    name = "endpointslice"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component="endpoint-slice-controller", clock=ctx.clock)
        self.workers = ctx.config.concurrent_service_endpoint_syncs
        self.max_endpoints = ctx.config.max_endpoints_per_slice
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.tracker = EndpointSliceTracker()
        self.services = ctx.informers.informer_for(Service)
        self.pods = ctx.informers.informer_for(Pod)
        self.nodes = ctx.informers.informer_for(Node)
        self.slices = ctx.informers.informer_for(EndpointSlice)
        queue_services_on_changes(self.services, self.pods, self.queue)
        self.slices.add_event_handler(EventHandler(
            on_add=self._on_slice_add, on_update=self._on_slice_update, on_delete=self._on_slice_delete))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name, "workers": self.workers})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, self.workers,
                                           kind="Service"))
        finally:
            await self.queue.shut_down()

    # --- event handlers: map events to Service keys, never block ------------------------------

    @staticmethod
    def _managed(slice_: EndpointSlice) -> bool:
        return (slice_.metadata.labels or {}).get(LABEL_MANAGED_BY) == CONTROLLER_NAME

    def _enqueue_owner(self, slice_: EndpointSlice) -> None:
        service_name = (slice_.metadata.labels or {}).get(LABEL_SERVICE_NAME)
        if service_name:
            self.queue.add_after(f"{slice_.metadata.namespace}/{service_name}", SLICE_CHANGE_DELAY)

    def _on_slice_add(self, slice_: EndpointSlice) -> None:
        if self._managed(slice_) and self.tracker.should_sync(slice_):
            self._enqueue_owner(slice_)

    def _on_slice_update(self, old: EndpointSlice, cur: EndpointSlice) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        old_labels, cur_labels = old.metadata.labels or {}, cur.metadata.labels or {}
        moved = old_labels.get(LABEL_SERVICE_NAME) != cur_labels.get(LABEL_SERVICE_NAME)
        if moved or self._managed(old) != self._managed(cur):
            self._enqueue_owner(old)
            self._enqueue_owner(cur)
        elif self._managed(cur) and self.tracker.should_sync(cur):
            self._enqueue_owner(cur)

    def _on_slice_delete(self, slice_: EndpointSlice) -> None:
        if self._managed(slice_) and self.tracker.has(slice_) and not self.tracker.handle_deletion(slice_):
            self._enqueue_owner(slice_)

    # --- reconcile -------------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        """Bring one Service's EndpointSlices in line with its pods (see the module doc)."""
        svc = self.services.store.get_by_name(req.namespace, req.name)
        if svc is None:
            self.tracker.delete_service(req.key)
            return None
        selector = service_selector(svc)
        if svc.spec.type == "ExternalName" or selector is None:
            return None
        pods = [p for p in self.pods.store.by_index("namespace", req.namespace)
                if selector_matches(selector, p.metadata.labels)]
        slices = [s for s in self.slices.store.by_index("namespace", req.namespace)
                  if self._managed(s) and (s.metadata.labels or {}).get(LABEL_SERVICE_NAME) == req.name]
        if self.tracker.stale(req.key, slices):
            logger.debug("EndpointSlice cache is out of date, will retry", extra={"service": req.key})
            return Result(requeue_after=STALE_CACHE_RETRY)
        if svc.metadata.deletion_timestamp is not None:
            return None
        plan = plan_slices(service=svc, pods=pods, existing=[s.to_dict() for s in slices],
                           node_for=lambda name: self.nodes.store.get(name), max_endpoints=self.max_endpoints)
        try:
            await self._apply(svc, plan)
        except ApiError as e:
            self.recorder.event(svc, EVENT_WARNING, "FailedToUpdateEndpointSlices",
                                f"Error updating Endpoint Slices for Service {req.key}: {e.message}")
            raise
        if plan.errors:
            raise RuntimeError("; ".join(plan.errors))  # written without those pods; retried with backoff
        return None

    async def _apply(self, svc: Service, plan: SlicePlan) -> None:
        if plan.empty():
            return
        logger.debug("Writing EndpointSlices", extra={"service": svc.key, "create": len(plan.create),
                                                       "update": len(plan.update), "delete": len(plan.delete)})
        if svc.metadata.deletion_timestamp is None:
            for body in plan.create:
                if not await self._create(body):
                    return
        for body in plan.update:
            self.tracker.update(await self.client.update(EndpointSlice.model_validate(body)))
        for body in plan.delete:
            await self._delete(body)

    async def _create(self, body: dict[str, Any]) -> bool:
        """Create one slice; False when its namespace is being deleted (nothing more to do)."""
        try:
            created = await self.client.create(EndpointSlice.model_validate(body))
        except Forbidden as e:
            if is_namespace_terminating(e):
                return False
            raise
        self.tracker.update(created)
        return True

    async def _delete(self, body: dict[str, Any]) -> None:
        existing = EndpointSlice.model_validate(body)
        try:
            await self.client.delete(EndpointSlice, existing.metadata.name or "", existing.metadata.namespace,
                                     uid=existing.metadata.uid)
        except NotFound:
            return
        self.tracker.expect_deletion(existing)
