"""The pod garbage collector: pods nobody else will ever clean up are deleted.

Mirrors pkg/controller/podgc/gc_controller.go. Every `pod_gc_period` seconds:
1. terminated pods (phase Succeeded or Failed) beyond `terminated_pod_gc_threshold` are
   deleted, evicted ones first, then the oldest (threshold 0: never);
2. orphaned pods, bound to a node that does not exist, are deleted once the node has been
   missing for the quarantine (`pod_gc_orphan_quarantine`; upstream 40s), confirmed by
   asking the API server rather than the cache, so a node that is just being registered
   keeps its pods; such a pod first gets DisruptionTarget=True (reason DeletionByPodGC,
   "PodGC: node no longer exists") and phase Failed;
3. terminating pods never bound to a node (nothing would finish their deletion) are deleted.
Deletions are forced (grace period 0) and conditional on the pod's uid: the kubelet that
would have finished them is gone or was never involved.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.context import ControllerContext
from kube.api import Node, Pod
from kube.errors import ApiError, NotFound
from kube.podutil import is_pod_terminal
from kube.timeutil import now_rfc3339

__all__ = ["PodGCController"]

logger = logging.getLogger(__name__)


def _eviction_then_age(pod: Pod) -> tuple[bool, str]:
    """byEvictionAndCreationTimestamp: evicted pods first, then by creation time."""
    return pod.status.reason != "Evicted", pod.metadata.creation_timestamp or ""


class PodGCController:
    name = "pod-garbage-collector"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.clock = ctx.clock
        self.threshold = ctx.config.terminated_pod_gc_threshold
        self.period = ctx.config.pod_gc_period
        self.quarantine = ctx.config.pod_gc_orphan_quarantine
        self.pods = ctx.informers.informer_for(Pod)
        self.nodes = ctx.informers.informer_for(Node)
        self._missing_since: dict[str, float] = {}
        """Node name -> when this controller first saw pods bound to it while it did not exist."""

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name, "threshold": self.threshold})
        while True:
            try:
                await self.gc()
            except Exception as e:  # noqa: BLE001 - one failed round must not stop collecting
                logger.warning("Pod garbage collection failed, will retry", extra={"error": repr(e)})
            await self.clock.sleep(self.period)

    async def gc(self) -> None:
        pods = self.pods.store.list()
        if self.threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_orphaned(pods)
        await self._gc_unscheduled_terminating(pods)

    async def _gc_terminated(self, pods: list[Pod]) -> None:
        terminated = [p for p in pods if is_pod_terminal(p)]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return
        logger.info("Garbage collecting terminated pods", extra={"count": excess, "threshold": self.threshold})
        for pod in sorted(terminated, key=_eviction_then_age)[:excess]:
            await self._delete(pod, None)

    async def _node_gone(self, name: str) -> bool:
        """True once the node has been missing for the quarantine and the server confirms it."""
        now = self.clock.now()
        since = self._missing_since.setdefault(name, now)
        if now - since < self.quarantine:
            return False
        try:
            await self.client.get(Node, name)
        except NotFound:
            return True
        self._missing_since.pop(name, None)
        return False

    async def _gc_orphaned(self, pods: list[Pod]) -> None:
        missing = {p.spec.node_name for p in pods
                   if p.spec.node_name and self.nodes.store.get_by_name(None, p.spec.node_name) is None}
        self._missing_since = {n: t for n, t in self._missing_since.items() if n in missing}
        gone = {n for n in sorted(n for n in missing if n) if await self._node_gone(n)}
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                     "message": "PodGC: node no longer exists", "lastTransitionTime": now_rfc3339()}
        for pod in pods:
            if pod.spec.node_name in gone:
                logger.info("Found orphaned Pod assigned to the Node, deleting",
                            extra={"pod": pod.key, "node": pod.spec.node_name})
                await self._delete(pod, condition)

    async def _gc_unscheduled_terminating(self, pods: list[Pod]) -> None:
        for pod in pods:
            if pod.metadata.deletion_timestamp is not None and not pod.spec.node_name:
                logger.info("Deleting unscheduled terminating pod", extra={"pod": pod.key})
                await self._delete(pod, None)

    async def _delete(self, pod: Pod, condition: dict[str, Any] | None) -> None:
        """markFailedAndDeletePodWithCondition: phase Failed (with the condition), then a forced delete."""
        name, namespace = str(pod.metadata.name), pod.metadata.namespace
        try:
            if not is_pod_terminal(pod):
                status: dict[str, Any] = {"phase": "Failed"}
                if condition is not None:
                    status["conditions"] = [condition]
                await self.client.patch(Pod, name, {"status": status}, namespace, subresource="status",
                                        patch_type="strategic")
            await self.client.delete(Pod, name, namespace, grace_period_seconds=0, uid=pod.metadata.uid)
        except NotFound:
            return
        except ApiError as e:
            logger.warning("Deleting pod failed, next round retries", extra={"pod": pod.key, "error": str(e)})
        await asyncio.sleep(0)
