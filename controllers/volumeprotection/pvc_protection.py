"""The PVC protection controller: a claim a pod uses is not deleted until no pod uses it.

Mirrors pkg/controller/volume/pvcprotection: a claim carries `kubernetes.io/pvc-protection`
(the StorageObjectInUseProtection admission adds it on create; this controller adds it to
older claims). Once a claim is being deleted, the finalizer is removed only when no pod that
is not terminated (neither Succeeded nor Failed) names the claim in a volume: first asked of
the pod cache, then, when the cache sees none, of the API server itself (a pod just created
may not be cached yet). Pod events requeue the claims they name.
"""

from __future__ import annotations

import asyncio
import logging

from controllers.context import ControllerContext
from kube.api import PVC_PROTECTION_FINALIZER, PersistentVolumeClaim, Pod
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import NotFound
from kube.podutil import is_pod_terminal
from kube.volumeutil import pod_claim_names
from kube.workqueue import WorkQueue

__all__ = ["PVCProtectionController", "CLAIM_INDEX", "claim_index"]

logger = logging.getLogger(__name__)

CLAIM_INDEX = "pvc-protection/claim"


def claim_index(pod: Pod) -> list[str]:
    """`namespace/claim` for every claim the pod's volumes name."""
    return [f"{pod.metadata.namespace}/{name}" for name in pod_claim_names(pod)]


def _uses(pod: Pod, claim: str) -> bool:
    return not is_pod_terminal(pod) and claim in pod_claim_names(pod)


class PVCProtectionController:
    name = "pvc-protection"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.claims = ctx.informers.informer_for(PersistentVolumeClaim)
        self.pods = ctx.informers.informer_for(Pod)
        self.pods.add_indexers({CLAIM_INDEX: claim_index})
        self.claims.add_event_handler(EventHandler(
            on_add=self._on_claim, on_update=lambda old, new: self._on_claim(new), on_delete=None))
        self.pods.add_event_handler(EventHandler(
            on_add=self._on_pod, on_update=lambda old, new: self._on_pod(new), on_delete=self._on_pod))

    def _on_claim(self, claim: PersistentVolumeClaim) -> None:
        protected = PVC_PROTECTION_FINALIZER in (claim.metadata.finalizers or [])
        if protected == (claim.metadata.deletion_timestamp is not None):
            self.queue.add(claim.key)

    def _on_pod(self, pod: Pod) -> None:
        for key in claim_index(pod):
            self.queue.add(key)

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 5, kind="PersistentVolumeClaim"))
        finally:
            await self.queue.shut_down()

    async def reconcile(self, req: Request) -> Result | None:
        """Add the finalizer to a live claim; remove it from a deleted one no pod uses."""
        claim = self.claims.store.get_by_name(req.namespace, req.name)
        if claim is None:
            return None
        finalizers = list(claim.metadata.finalizers or [])
        if claim.metadata.deletion_timestamp is None:
            if PVC_PROTECTION_FINALIZER not in finalizers:
                await self._set_finalizers(claim, [*finalizers, PVC_PROTECTION_FINALIZER])
            return None
        if PVC_PROTECTION_FINALIZER not in finalizers or await self._in_use(claim, req.name):
            return None
        logger.info("Removing the protection finalizer: no pod uses the claim", extra={"claim": req.key})
        await self._set_finalizers(claim, [f for f in finalizers if f != PVC_PROTECTION_FINALIZER])
        return None

    async def _in_use(self, claim: PersistentVolumeClaim, name: str) -> bool:
        if any(_uses(pod, name) for pod in self.pods.store.by_index(CLAIM_INDEX, claim.key)):
            return True
        live = await self.client.list(Pod, claim.metadata.namespace)
        return any(_uses(pod, name) for pod in live.items)

    async def _set_finalizers(self, claim: PersistentVolumeClaim, finalizers: list[str]) -> None:
        try:
            await self.client.patch(PersistentVolumeClaim, str(claim.metadata.name), {"metadata": {
                "resourceVersion": claim.metadata.resource_version, "finalizers": finalizers}},
                claim.metadata.namespace)
        except NotFound:
            pass
