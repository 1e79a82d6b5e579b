"""The Endpoints controller: the core/v1 Endpoints object of every Service with a selector.

Mirrors pkg/controller/endpoint/endpoints_controller.go. Informers on Services, Pods and
Endpoints; Pod events map to the Services of the pod's namespace that select it, and a
deleted Endpoints object queues its Service so that it is written again.

`reconcile` is level-triggered and safe to run twice or after a restart:
1. a Service gone: delete the Endpoints of that name (at start-up every existing Endpoints
   object is looked at once, so one left behind while the controller was down goes too,
   leader-election records excepted);
2. ExternalName Services and Services without a selector are left alone: their Endpoints
   are written by someone else (a user, or for `default/kubernetes` the API servers, whose
   Endpoints this controller never touches);
3. compute the subsets from the selected pods (`subsets.desired_subsets`), cap them, and
   create or update the Endpoints only when subsets, labels (the Service's, plus
   `service.kubernetes.io/headless` for a headless one) or the over-capacity annotation
   differ from the cache, the update conditional on the resourceVersion read;
4. while the cache still shows what this controller replaced (or lacks what it created),
   look again shortly instead of writing from stale data.
Guarantee: when the Endpoints already match the pods, a reconcile writes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.common.endpoints import (
    LABEL_HEADLESS,
    is_service_ip_set,
    queue_services_on_changes,
    selector_matches,
    service_selector,
)
from controllers.common.errors import is_namespace_terminating
from controllers.context import ControllerContext
from controllers.endpoint.subsets import OVER_CAPACITY_ANNOTATION, desired_subsets, subsets_equal, truncate_subsets
from kube.api import Endpoints, Pod, Service
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import ApiError, NotFound
from kube.events import EVENT_WARNING, EventRecorder
from kube.workqueue import WorkQueue

__all__ = ["EndpointsController"]

logger = logging.getLogger(__name__)

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
"""Endpoints used as leader-election records have no Service and are never cleaned up."""
API_SERVER_SERVICE = "default/kubernetes"
STALE_CACHE_RETRY = 0.1
_CREATED = "<created>"
"""Marker: created by this controller, not yet in the cache."""


class EndpointsController:
    name = "endpoint"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component="endpoint-controller", clock=ctx.clock)
        self.workers = ctx.config.concurrent_endpoint_syncs
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.written: dict[str, str] = {}
        """Service key -> resourceVersion this controller replaced (or _CREATED), until the cache moves on."""
        self.services = ctx.informers.informer_for(Service)
        self.pods = ctx.informers.informer_for(Pod)
        self.endpoints = ctx.informers.informer_for(Endpoints)
        queue_services_on_changes(self.services, self.pods, self.queue)
        self.endpoints.add_event_handler(EventHandler(on_delete=lambda ep: self.queue.add(ep.key)))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name, "workers": self.workers})
        for ep in self.endpoints.store.list():  # leftovers of Services deleted while nobody watched
            if LEADER_ANNOTATION not in (ep.metadata.annotations or {}):
                self.queue.add(ep.key)
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, self.workers,
                                           kind="Service"))
        finally:
            await self.queue.shut_down()

    # --- reconcile -------------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        """Bring one Service's Endpoints in line with its pods (see the module doc)."""
        if req.key == API_SERVER_SERVICE:
            return None  # the API servers write their own; never delete them, even before the Service exists
        svc = self.services.store.get_by_name(req.namespace, req.name)
        if svc is None:
            self.written.pop(req.key, None)
            try:
                await self.client.delete(Endpoints, req.name, req.namespace)
            except NotFound:
                pass
            return None
        selector = service_selector(svc)
        if svc.spec.type == "ExternalName" or selector is None:
            return None
        current = self.endpoints.store.get_by_name(req.namespace, req.name)
        if self._stale(req.key, current):
            logger.debug("Endpoints cache is out of date, will retry", extra={"service": req.key})
            return Result(requeue_after=STALE_CACHE_RETRY)
        pods = [p for p in self.pods.store.by_index("namespace", req.namespace)
                if selector_matches(selector, p.metadata.labels)]
        subsets = desired_subsets(svc, pods)
        truncated = truncate_subsets(subsets)
        labels = dict(svc.metadata.labels or {})
        if not is_service_ip_set(svc):
            labels[LABEL_HEADLESS] = ""
        if current is not None and self._unchanged(current, subsets, labels, truncated=truncated):
            return None
        await self._write(svc, current, subsets=subsets, labels=labels, truncated=truncated)
        return None

    def _stale(self, key: str, current: Endpoints | None) -> bool:
        written = self.written.get(key)
        if written is None:
            return False
        if written == _CREATED:
            stale = current is None
        else:
            stale = current is not None and current.metadata.resource_version == written
        if not stale:
            del self.written[key]
        return stale

    @staticmethod
    def _unchanged(current: Endpoints, subsets: list[dict[str, Any]], labels: dict[str, str], *,
                   truncated: bool) -> bool:
        have = current.to_dict()
        over = OVER_CAPACITY_ANNOTATION in (current.metadata.annotations or {})
        return subsets_equal(have.get("subsets") or [], subsets) and (current.metadata.labels or {}) == labels \
            and over == truncated

    async def _write(self, svc: Service, current: Endpoints | None, *, subsets: list[dict[str, Any]],
                     labels: dict[str, str], truncated: bool) -> None:
        body: dict[str, Any] = current.to_dict() if current is not None else {
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": svc.metadata.name, "namespace": svc.metadata.namespace}}
        meta = body["metadata"]
        meta["labels"] = labels
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != OVER_CAPACITY_ANNOTATION}
        if truncated:
            annotations[OVER_CAPACITY_ANNOTATION] = "truncated"
        meta["annotations"] = annotations
        body["subsets"] = subsets
        endpoints = Endpoints.model_validate(body)
        try:
            if current is None:
                await self.client.create(endpoints)
                self.written[svc.key] = _CREATED
            else:
                await self.client.update(endpoints)
                self.written[svc.key] = current.metadata.resource_version or ""
        except ApiError as e:
            if current is None and is_namespace_terminating(e):
                return  # the namespace is going away; nothing to write any more
            verb = ("FailedToCreateEndpoint", "Failed to create endpoint for service") if current is None else \
                ("FailedToUpdateEndpoint", "Failed to update endpoint")
            self.recorder.event(endpoints, EVENT_WARNING, verb[0], f"{verb[1]} {svc.key}: {e.message}")
            raise
        logger.debug("Wrote Endpoints", extra={"service": svc.key, "subsets": len(subsets)})
