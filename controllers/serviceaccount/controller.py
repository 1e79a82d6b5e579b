"""The serviceaccounts controller: every active namespace has a `default` ServiceAccount.

Mirrors pkg/controller/serviceaccount's ServiceAccountsController: a namespace added (or
resynced) and a `default` ServiceAccount deleted both queue the namespace; the reconcile
creates the account when the namespace exists, is not terminating, and has none. A create
that finds it already there is success, so a restarted controller is harmless.
"""

from __future__ import annotations

import logging

from controllers.context import ControllerContext
from kube.api import Namespace, ServiceAccount
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import AlreadyExists, Forbidden, NotFound
from kube.workqueue import WorkQueue

__all__ = ["ServiceAccountsController", "DEFAULT_NAME"]

logger = logging.getLogger(__name__)

DEFAULT_NAME = "default"


class ServiceAccountsController:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.namespaces = ctx.informers.informer_for(Namespace)
        self.accounts = ctx.informers.informer_for(ServiceAccount)
        self.queue: WorkQueue[str] = WorkQueue(name="serviceaccount", clock=ctx.clock)
        self.namespaces.add_event_handler(EventHandler(
            on_add=lambda ns: self.queue.add(str(ns.metadata.name)),
            on_update=lambda _old, ns: self.queue.add(str(ns.metadata.name))))
        self.accounts.add_event_handler(EventHandler(
            on_delete=lambda sa: self.queue.add(str(sa.metadata.namespace))
            if sa.metadata.name == DEFAULT_NAME else None))

    async def run(self) -> None:
        try:
            await run_workers("serviceaccount", self.queue, self.reconcile, workers=2)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        ns = self.namespaces.store.get(request.name)
        if ns is None or ns.metadata.deletion_timestamp or (ns.status and ns.status.phase == "Terminating"):
            return None
        if self.accounts.store.get(f"{request.name}/{DEFAULT_NAME}") is not None:
            return None
        body = {"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": DEFAULT_NAME, "namespace": request.name}}
        try:
            await self.client.create(ServiceAccount.model_validate(body))
            logger.info("Created default ServiceAccount", extra={"namespace": request.name})
        except AlreadyExists:
            pass
        except (NotFound, Forbidden):
            pass  # the namespace went away or started terminating in between
        return None
