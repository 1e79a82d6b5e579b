"""The scheduler's view of storage, and the binding step that waits for volumes.

Mirrors kube-scheduler's volumebinding `SchedulerVolumeBinder`, split in two:
- `VolumeLister` answers the VolumeBinding plugin's lookups (claims, volumes, classes) from
  the scheduler's informer caches; it does no I/O, so the plugin stays pure;
- `VolumeBinder.bind_pod_volumes(pod, node)` is the PreBind step: every claim of the pod that
  is unbound and of a WaitForFirstConsumer class gets `volume.kubernetes.io/selected-node:
  <node>` (the PV controller provisions or binds it there), then the call waits until each
  claim of the pod is Bound, and raises `VolumeBindingError` when one is lost, deleted, or
  not bound within `timeout` (upstream's bind timeout, 600 s by default). The pod is bound
  to the node only after this returns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from kube.api import (
    ANN_SELECTED_NODE,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from kube.cache import Store
from kube.client import RESTClient
from kube.volumeutil import pod_claim_names

__all__ = ["VolumeBinder", "VolumeBindingError", "VolumeLister"]

logger = logging.getLogger(__name__)


class VolumeBindingError(Exception):
    """The pod's volumes could not be bound on the chosen node; the pod is retried."""


class VolumeLister:
    """Read-only lookups on the claim, volume and class caches; safe to call from any task."""

    def __init__(self, claims: Store[PersistentVolumeClaim], volumes: Store[PersistentVolume],
                 classes: Store[StorageClass]) -> None:
        self.claims, self.volumes, self.classes = claims, volumes, classes

    def claim(self, namespace: str | None, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get_by_name(namespace, name)

    def volume(self, name: str) -> PersistentVolume | None:
        return self.volumes.get_by_name(None, name)

    def list_volumes(self) -> list[PersistentVolume]:
        return self.volumes.list()

    def storage_class(self, name: str | None) -> StorageClass | None:
        return self.classes.get_by_name(None, name) if name else None

    def delays_binding(self, claim: PersistentVolumeClaim) -> bool:
        """The claim is unbound and its class binds only once a pod using it is scheduled."""
        storage_class = self.storage_class(claim.spec.storage_class_name)
        return not claim.spec.volume_name and storage_class is not None and \
            storage_class.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER


class VolumeBinder:
    """The PreBind step of pods with claims."""

    def __init__(self, client: RESTClient, lister: VolumeLister, *, timeout: float = 600.0,
                 poll_interval: float = 0.2) -> None:
        self.client, self.lister = client, lister
        self.timeout, self.poll_interval = timeout, poll_interval

    async def bind_pod_volumes(self, pod: Pod, node_name: str, *,
                               still_wanted: Callable[[], bool] = lambda: True) -> None:
        """Select `node_name` for the pod's delayed claims and wait until all its claims are Bound.

        Raises VolumeBindingError on a lost or missing claim, on timeout, and as soon as
        `still_wanted()` turns false (the pod was deleted meanwhile).
        """
        namespace = pod.metadata.namespace
        names = pod_claim_names(pod)
        for name in names:
            claim = self.lister.claim(namespace, name)
            if claim is None or not self.lister.delays_binding(claim):
                continue
            if (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE) != node_name:
                await self.client.patch(PersistentVolumeClaim, name, {"metadata": {
                    "resourceVersion": claim.metadata.resource_version,
                    "annotations": {ANN_SELECTED_NODE: node_name}}}, namespace)
                logger.info("Selected node for claim", extra={"pod": pod.key, "claim": f"{namespace}/{name}",
                                                              "node": node_name})
        deadline = time.monotonic() + self.timeout
        while not self._all_bound(namespace, names):
            if not still_wanted():
                raise VolumeBindingError("the pod is gone or being deleted")
            if time.monotonic() > deadline:
                raise VolumeBindingError("binding volumes: timed out waiting for the condition")
            await asyncio.sleep(self.poll_interval)

    def _all_bound(self, namespace: str | None, names: list[str]) -> bool:
        for name in names:
            claim = self.lister.claim(namespace, name)
            if claim is None or claim.metadata.deletion_timestamp is not None:
                raise VolumeBindingError(f'persistentvolumeclaim "{name}" not found')
            if claim.status.phase == "Lost":
                raise VolumeBindingError(f'persistentvolumeclaim "{name}" is Lost')
            if claim.status.phase != "Bound" or not claim.spec.volume_name:
                return False
        return True
