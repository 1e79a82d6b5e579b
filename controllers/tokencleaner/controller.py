"""The token cleaner: deletes bootstrap token Secrets once they have expired.

Mirrors pkg/controller/bootstrap/tokencleaner.go: it watches kube-system's Secrets; a Secret
of type `bootstrap.kubernetes.io/token` whose `expiration` has passed (or does not parse) is
deleted, with its uid as precondition so a re-created token of the same name is left
alone; one that has not expired yet is looked at again when it does. The API server
already refuses an expired token; this removes it from the cluster.
"""

from __future__ import annotations

import logging

from controllers.context import ControllerContext
from kube.api import Secret
from kube.bootstraptoken import SECRET_TYPE, decode_secret_data, expiration_of, is_expired
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.workqueue import WorkQueue

__all__ = ["TokenCleaner"]

logger = logging.getLogger(__name__)

NAMESPACE = "kube-system"


class TokenCleaner:
    def __init__(self, ctx: ControllerContext) -> None:
        self.client, self.now = ctx.client, ctx.now
        self.secrets = ctx.informers.informer_for(Secret, namespace=NAMESPACE)
        self.queue: WorkQueue[str] = WorkQueue(name="token-cleaner", clock=ctx.clock)
        self.secrets.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda _old, secret: self._enqueue(secret)))

    def _enqueue(self, secret: Secret) -> None:
        if secret.type == SECRET_TYPE:
            self.queue.add(str(secret.metadata.name))

    async def run(self) -> None:
        try:
            await run_workers("token-cleaner", self.queue, self.reconcile, workers=1)
        finally:
            await self.queue.shut_down()

    async def reconcile(self, request: Request) -> Result | None:
        secret = self.secrets.store.get(f"{NAMESPACE}/{request.name}")
        if secret is None or secret.type != SECRET_TYPE:
            return None
        data = decode_secret_data(secret.to_dict())
        now = self.now()
        if not is_expired(data, now):
            expires = expiration_of(data)
            return Result(requeue_after=(expires - now).total_seconds()) if expires is not None else None
        try:
            await self.client.delete(Secret, request.name, NAMESPACE, uid=secret.metadata.uid)
        except (NotFound, Conflict):
            return None
        logger.info("Deleted expired bootstrap token", extra={"secret": request.name})
        return None
