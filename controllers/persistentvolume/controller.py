"""The PersistentVolume controller: binds claims to volumes, provisions, and reclaims.

Mirrors pkg/controller/volume/persistentvolume (pv_controller.go, the `persistentvolume-binder`),
level-based over two work queues, one of claims and one of volumes:
- an unbound claim binds to the best matching volume (`matching.find_matching_volume`);
  without one, a claim of a class is provisioned: at once for Immediate classes, once the
  scheduler has set `volume.kubernetes.io/selected-node` for WaitForFirstConsumer ones
  (a WaitForFirstConsumer event until then). `picokube.io/local-path` is provisioned here
  (`local_path`); any other provisioner is left to an external one (ExternalProvisioning);
- binding writes, in upstream's order, the volume's claimRef (annotated
  `pv.kubernetes.io/bound-by-controller`), the volume's phase Bound, the claim's volumeName
  (annotated `pv.kubernetes.io/bind-completed`) and the claim's status (Bound, capacity,
  access modes). Every write is conditional or idempotent, so a crash mid-way resumes;
- a bound claim whose volume disappears is Lost (ClaimLost); a volume whose claim is gone is
  Released, then Retain keeps it, Delete deletes it (a local-path directory is then removed
  by its node's kubelet), Recycle fails it (VolumeFailedRecycle, unsupported);
- a volume bound by the controller to a claim that is bound elsewhere is unbound again.
Upstream's phases, annotations, event reasons and messages throughout.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.context import ControllerContext
from controllers.persistentvolume.local_path import (
    LOCAL_PATH_PROVISIONER,
    ProvisioningError,
    local_path_volume,
)
from kube.api import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import AlreadyExists, ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.volume_matching import claim_ref_matches, find_matching_volume, volume_mismatch
from kube.workqueue import WorkQueue

__all__ = ["PersistentVolumeController"]

logger = logging.getLogger(__name__)

_RETRY_SECONDS = 5.0


class PersistentVolumeController:
    name = "persistentvolume-binder"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.default_class = ctx.config.default_storage_class
        self.recorder = EventRecorder(ctx.client, component="persistentvolume-controller", clock=ctx.clock)
        self.claim_queue: WorkQueue[str] = WorkQueue(name="claims", clock=ctx.clock)
        self.volume_queue: WorkQueue[str] = WorkQueue(name="volumes", clock=ctx.clock)
        self.claims = ctx.informers.informer_for(PersistentVolumeClaim)
        self.volumes = ctx.informers.informer_for(PersistentVolume)
        self.classes = ctx.informers.informer_for(StorageClass)
        self.nodes = ctx.informers.informer_for(Node)
        self.claims.add_event_handler(EventHandler(
            on_add=self._on_claim, on_update=lambda old, new: self._on_claim(new), on_delete=self._on_claim))
        self.volumes.add_event_handler(EventHandler(
            on_add=self._on_volume, on_update=lambda old, new: self._on_volume(new), on_delete=self._on_volume))
        self.classes.add_event_handler(EventHandler(
            on_add=self._on_class, on_update=lambda old, new: self._on_class(new), on_delete=None))

    # --- events: enqueue keys only ------------------------------------------------------
    def _on_claim(self, claim: PersistentVolumeClaim) -> None:
        self.claim_queue.add(claim.key)
        if claim.spec.volume_name:
            self.volume_queue.add(claim.spec.volume_name)

    def _on_volume(self, volume: PersistentVolume) -> None:
        self.volume_queue.add(volume.key)
        ref = volume.spec.claim_ref
        if ref is not None and ref.name:
            self.claim_queue.add(f"{ref.namespace}/{ref.name}")

    def _on_class(self, storage_class: StorageClass) -> None:
        for claim in self.claims.store.list():
            if claim.spec.storage_class_name == storage_class.metadata.name and not claim.spec.volume_name:
                self.claim_queue.add(claim.key)

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                if self.default_class:
                    tg.create_task(self._ensure_default_class(self.default_class))
                tg.create_task(run_workers("persistentvolume-binder-claims", self.claim_queue, self.sync_claim, 5,
                                           actor="persistentvolume-binder-controller", kind="PersistentVolumeClaim"))
                tg.create_task(run_workers("persistentvolume-binder-volumes", self.volume_queue, self.sync_volume, 5,
                                           actor="persistentvolume-binder-controller", kind="PersistentVolume"))
        finally:
            await self.claim_queue.shut_down()
            await self.volume_queue.shut_down()

    async def _ensure_default_class(self, name: str) -> None:
        """Create the default local-path class unless a class of that name exists (never overwrites it)."""
        from kube.api import ANN_DEFAULT_STORAGE_CLASS, ObjectMeta

        storage_class = StorageClass(
            metadata=ObjectMeta(name=name, annotations={ANN_DEFAULT_STORAGE_CLASS: "true"}),
            provisioner=LOCAL_PATH_PROVISIONER, reclaim_policy="Delete",
            volume_binding_mode=BINDING_WAIT_FOR_FIRST_CONSUMER)
        if self.classes.store.get_by_name(None, name) is not None:
            return
        while True:
            try:
                await self.client.create(storage_class)
                logger.info("Created the default StorageClass", extra={"storage_class": name})
                return
            except AlreadyExists:
                return
            except ApiError as e:  # a loop boundary: retried, never fatal to the controller
                logger.warning("Creating the default StorageClass failed, will retry",
                               extra={"storage_class": name, "error": str(e)})
                await asyncio.sleep(_RETRY_SECONDS)

    # --- claims -------------------------------------------------------------------------
    async def sync_claim(self, req: Request) -> Result | None:
        """Bind, provision or mark lost one claim, as the caches have it now."""
        claim = self.claims.store.get_by_name(req.namespace, req.name)
        if claim is None:
            return None
        if not claim.spec.volume_name:
            return await self._sync_unbound_claim(claim)
        return await self._sync_bound_claim(claim)

    def _class_of(self, claim: PersistentVolumeClaim) -> StorageClass | None:
        name = claim.spec.storage_class_name
        return self.classes.store.get_by_name(None, name) if name else None

    async def _sync_unbound_claim(self, claim: PersistentVolumeClaim) -> Result | None:
        storage_class = self._class_of(claim)
        waits = storage_class is not None and storage_class.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER
        selected = (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE)
        if waits and not selected:
            self.recorder.event(claim, EVENT_NORMAL, "WaitForFirstConsumer",
                                "waiting for first consumer to be created before binding")
            return None
        node = self.nodes.store.get_by_name(None, selected) if selected else None
        # A selected node the cache does not know matches no volume (provisioning reports it).
        volume = None if selected and node is None else find_matching_volume(
            claim, self.volumes.store.list(), node=node)
        if volume is not None:
            await self._bind(volume, claim)
            return None
        if not claim.spec.storage_class_name:
            self.recorder.event(claim, EVENT_NORMAL, "FailedBinding",
                                "no persistent volumes available for this claim and no storage class is set")
            return None
        if storage_class is None:
            self.recorder.event(claim, EVENT_WARNING, "ProvisioningFailed",
                                f'storageclass.storage.k8s.io "{claim.spec.storage_class_name}" not found')
            return None
        return await self._provision(claim, storage_class, selected)

    async def _sync_bound_claim(self, claim: PersistentVolumeClaim) -> Result | None:
        volume = self.volumes.store.get_by_name(None, str(claim.spec.volume_name))
        annotations = claim.metadata.annotations or {}
        if volume is None:
            was_bound = claim.status.phase == "Bound" or ANN_BIND_COMPLETED in annotations
            if was_bound and claim.status.phase != "Lost":
                await self._claim_phase(claim, "Lost")
                self.recorder.event(claim, EVENT_WARNING, "ClaimLost",
                                    "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            return None
        if volume.spec.claim_ref is None and (mismatch := volume_mismatch(volume, claim)) is not None:
            self.recorder.event(claim, EVENT_WARNING, "VolumeMismatch",
                                f'Cannot bind to requested volume "{volume.metadata.name}": {mismatch}')
            return None
        if volume.spec.claim_ref is None or claim_ref_matches(volume, claim):
            await self._bind(volume, claim)
            return None
        if ANN_BIND_COMPLETED in annotations:
            if claim.status.phase != "Lost":
                await self._claim_phase(claim, "Lost")
                self.recorder.event(claim, EVENT_WARNING, "ClaimMisbound",
                                    "Two claims are bound to the same volume, this one is bound incorrectly")
        else:
            self.recorder.event(claim, EVENT_WARNING, "FailedBinding",
                                f'volume "{volume.metadata.name}" already bound to a different claim.')
        return None

    async def _provision(self, claim: PersistentVolumeClaim, storage_class: StorageClass,
                         node_name: str | None) -> Result | None:
        provisioner = storage_class.provisioner
        annotations = claim.metadata.annotations or {}
        if annotations.get(ANN_STORAGE_PROVISIONER) != provisioner:
            await self.client.patch(PersistentVolumeClaim, str(claim.metadata.name), {"metadata": {"annotations": {
                ANN_STORAGE_PROVISIONER: provisioner, ANN_BETA_STORAGE_PROVISIONER: provisioner}}},
                claim.metadata.namespace)
            return None  # the claim's update brings it back
        if provisioner != LOCAL_PATH_PROVISIONER:
            self.recorder.event(claim, EVENT_NORMAL, "ExternalProvisioning",
                                f"Waiting for a volume to be created either by the external provisioner "
                                f"'{provisioner}' or manually by the system administrator. If volume creation is "
                                "delayed, please verify that the provisioner is running and correctly registered.")
            return None
        if not node_name:
            self.recorder.event(claim, EVENT_WARNING, "ProvisioningFailed", "configuration error, no node was "
                                                                              "specified")
            return None
        try:
            volume = local_path_volume(claim, storage_class, self.nodes.store.get_by_name(None, node_name), node_name)
        except ProvisioningError as e:
            self.recorder.event(claim, EVENT_WARNING, "ProvisioningFailed", str(e))
            return Result(requeue_after=_RETRY_SECONDS)
        self.recorder.event(claim, EVENT_NORMAL, "Provisioning",
                            f'External provisioner is provisioning volume for claim "{claim.key}"')
        try:
            volume = await self.client.create(volume)
        except AlreadyExists:
            volume = await self.client.get(PersistentVolume, str(volume.metadata.name))
        logger.info("Provisioned volume", extra={"claim": claim.key, "volume": volume.metadata.name,
                                                 "node": node_name})
        self.recorder.event(claim, EVENT_NORMAL, "ProvisioningSucceeded",
                            f"Successfully provisioned volume {volume.metadata.name}")
        await self._bind(volume, claim)
        return None

    # --- binding ------------------------------------------------------------------------
    async def _bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """Bind both ways (each step skipped when already done); raises on a failed write (the queue retries)."""
        name, claim_name, ns = str(volume.metadata.name), str(claim.metadata.name), claim.metadata.namespace
        ref = volume.spec.claim_ref
        if ref is None or ref.uid != claim.metadata.uid:
            patch: dict[str, Any] = {
                "metadata": {"resourceVersion": volume.metadata.resource_version},
                "spec": {"claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns,
                                      "name": claim_name, "uid": claim.metadata.uid,
                                      "resourceVersion": claim.metadata.resource_version}}}
            if ref is None:
                patch["metadata"]["annotations"] = {ANN_BOUND_BY_CONTROLLER: "yes"}
            volume = await self.client.patch(PersistentVolume, name, patch)
        if volume.status.phase != "Bound":
            await self.client.patch(PersistentVolume, name, {"status": {"phase": "Bound"}}, subresource="status")
        annotations = claim.metadata.annotations or {}
        if claim.spec.volume_name != name or ANN_BIND_COMPLETED not in annotations:
            set_annotations = {ANN_BIND_COMPLETED: "yes"}
            if claim.spec.volume_name != name:
                set_annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            claim = await self.client.patch(PersistentVolumeClaim, claim_name, {
                "metadata": {"resourceVersion": claim.metadata.resource_version, "annotations": set_annotations},
                "spec": {"volumeName": name}}, ns)
        status = {"phase": "Bound", "accessModes": volume.spec.access_modes, "capacity": volume.spec.capacity}
        if (claim.status.phase, claim.status.access_modes, claim.status.capacity) != (
                "Bound", volume.spec.access_modes, volume.spec.capacity):
            await self.client.patch(PersistentVolumeClaim, claim_name, {"status": status}, ns, subresource="status")
            logger.info("Bound claim", extra={"claim": claim.key, "volume": name})

    async def _claim_phase(self, claim: PersistentVolumeClaim, phase: str) -> None:
        await self.client.patch(PersistentVolumeClaim, str(claim.metadata.name), {"status": {"phase": phase}},
                                claim.metadata.namespace, subresource="status")

    async def _volume_phase(self, volume: PersistentVolume, phase: str, message: str | None = None) -> None:
        if volume.status.phase != phase:
            await self.client.patch(PersistentVolume, str(volume.metadata.name),
                                    {"status": {"phase": phase, "message": message}}, subresource="status")

    # --- volumes ------------------------------------------------------------------------
    async def sync_volume(self, req: Request) -> Result | None:
        """Set one volume's phase from its claim, and reclaim it once the claim is gone."""
        volume = self.volumes.store.get_by_name(None, req.name)
        if volume is None or volume.metadata.deletion_timestamp is not None:
            return None
        ref = volume.spec.claim_ref
        if ref is None:
            await self._volume_phase(volume, "Available")
            return None
        claim = self.claims.store.get_by_name(ref.namespace, str(ref.name))
        if not ref.uid:  # pre-bound by its author to a claim that binds to it later
            if claim is not None and not claim.spec.volume_name:
                self.claim_queue.add(claim.key)
            await self._volume_phase(volume, "Available")
            return None
        if claim is None or claim.metadata.uid != ref.uid:
            claim = await self._fresh_claim(str(ref.namespace), str(ref.name), ref.uid)
        if claim is None:
            return await self._reclaim(volume)
        if claim.spec.volume_name == volume.metadata.name:
            await self._volume_phase(volume, "Bound")
        elif not claim.spec.volume_name:
            self.claim_queue.add(claim.key)  # binding is under way
        elif (volume.metadata.annotations or {}).get(ANN_BOUND_BY_CONTROLLER):
            # We bound it, but the claim went to another volume: give this one back.
            await self.client.patch(PersistentVolume, str(volume.metadata.name), {
                "metadata": {"resourceVersion": volume.metadata.resource_version,
                             "annotations": {ANN_BOUND_BY_CONTROLLER: None}}, "spec": {"claimRef": None}})
        return None

    async def _fresh_claim(self, namespace: str, name: str, uid: str) -> PersistentVolumeClaim | None:
        """The claim from the API server (the cache may not have seen it yet), or None when gone."""
        try:
            claim = await self.client.get(PersistentVolumeClaim, name, namespace)
        except NotFound:
            return None
        return claim if claim.metadata.uid == uid else None

    async def _reclaim(self, volume: PersistentVolume) -> Result | None:
        policy = volume.spec.persistent_volume_reclaim_policy or "Retain"
        if volume.status.phase not in ("Released", "Failed"):
            await self._volume_phase(volume, "Released")
            return None  # the update brings it back, Released
        if policy == "Delete" and volume.status.phase == "Released":
            logger.info("Deleting released volume", extra={"volume": volume.metadata.name})
            try:
                await self.client.delete(PersistentVolume, str(volume.metadata.name), uid=volume.metadata.uid)
            except NotFound:
                pass
        elif policy == "Recycle" and volume.status.phase == "Released":
            await self._volume_phase(volume, "Failed", "Recycle is not supported")
            self.recorder.event(volume, EVENT_WARNING, "VolumeFailedRecycle", "Recycle is not supported")
        return None
