"""The PV protection controller: a volume is not deleted while it is bound to a claim.

Mirrors pkg/controller/volume/pvprotection: a volume carries `kubernetes.io/pv-protection`
(the StorageObjectInUseProtection admission adds it on create; this controller adds it to
older volumes); once the volume is being deleted the finalizer goes only when the volume's
phase is not Bound, i.e. after its claim was deleted and the binder released it.
"""

from __future__ import annotations

import asyncio
import logging

from controllers.context import ControllerContext
from kube.api import PV_PROTECTION_FINALIZER, PersistentVolume
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import NotFound
from kube.workqueue import WorkQueue

__all__ = ["PVProtectionController"]

logger = logging.getLogger(__name__)


class PVProtectionController:
    name = "pv-protection"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.volumes = ctx.informers.informer_for(PersistentVolume)
        self.volumes.add_event_handler(EventHandler(
            on_add=self._on_volume, on_update=lambda old, new: self._on_volume(new), on_delete=None))

    def _on_volume(self, volume: PersistentVolume) -> None:
        self.queue.add(volume.key)

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 5, kind="PersistentVolume"))
        finally:
            await self.queue.shut_down()

    async def reconcile(self, req: Request) -> Result | None:
        volume = self.volumes.store.get_by_name(None, req.name)
        if volume is None:
            return None
        finalizers = list(volume.metadata.finalizers or [])
        if volume.metadata.deletion_timestamp is None:
            if PV_PROTECTION_FINALIZER not in finalizers:
                await self._set_finalizers(volume, [*finalizers, PV_PROTECTION_FINALIZER])
            return None
        if PV_PROTECTION_FINALIZER in finalizers and volume.status.phase != "Bound":
            await self._set_finalizers(volume, [f for f in finalizers if f != PV_PROTECTION_FINALIZER])
        return None

    async def _set_finalizers(self, volume: PersistentVolume, finalizers: list[str]) -> None:
        try:
            await self.client.patch(PersistentVolume, str(volume.metadata.name), {"metadata": {
                "resourceVersion": volume.metadata.resource_version, "finalizers": finalizers}})
        except NotFound:
            pass
