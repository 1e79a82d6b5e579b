"""The disruption controller: keep every PodDisruptionBudget's status true to its pods.

Mirrors pkg/controller/disruption/disruption.go. Informers on budgets, pods, ReplicaSets and
Deployments; a pod event enqueues the budgets in its namespace whose selector matches it (a
budget with no selector selects nothing, an empty one everything), a budget event enqueues
itself, and a workload change enqueues its namespace's budgets (their expected count may
change). `reconcile` is level-triggered:
1. select the budget's pods from the cache (an event "NoPods" when there are none);
2. work out the expected and desired healthy counts (see `expected.py`), warning
   "UnmanagedPods" about selected pods without a controller;
3. keep the evictions still pending in disruptedPods, count healthy pods, and write the
   status (see `status.py`) through /status, conditional on the cached resourceVersion,
   when it changed; look again when the earliest pending eviction expires.
When a sync fails the budget is made fail-safe: disruptionsAllowed 0 and DisruptionAllowed
False with reason SyncFailed, so evictions stop rather than proceed on stale numbers.
"""

from __future__ import annotations

import asyncio
import logging

from controllers.context import ControllerContext
from controllers.disruption.expected import expected_budget
from controllers.disruption.status import (
    current_healthy,
    disrupted_pods,
    new_status,
    status_changed,
)
from kube.api import (
    DISRUPTION_ALLOWED_CONDITION,
    SYNC_FAILED_REASON,
    Deployment,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetCondition,
    ReplicaSet,
)
from kube.cache import EventHandler
from kube.controller import Request, Result, run_workers
from kube.errors import ApiError
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.resources import resource_for_kind
from kube.selectors import LabelSelector, selector_from_label_selector
from kube.timeutil import format_time
from kube.workqueue import WorkQueue

__all__ = ["DisruptionController"]

logger = logging.getLogger(__name__)

_UNMANAGED = ("Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be unmanaged. As a "
              "result, the status of the PDB cannot be calculated correctly, which may result in undefined "
              "behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an "
              "integer value.")


def _selector(pdb: PodDisruptionBudget) -> LabelSelector | None:
    """The budget's selector; None (select nothing) when absent or unparseable."""
    if pdb.spec.selector is None:
        return None
    try:
        return selector_from_label_selector(pdb.spec.selector.to_dict())
    except (ValueError, KeyError):
        return None


class DisruptionController:
    name = "disruption"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.now = ctx.now
        self.recorder = EventRecorder(ctx.client, component="controllermanager", clock=ctx.clock)
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.pdbs = ctx.informers.informer_for(PodDisruptionBudget)
        self.pods = ctx.informers.informer_for(Pod)
        self.replicasets = ctx.informers.informer_for(ReplicaSet)
        self.deployments = ctx.informers.informer_for(Deployment)
        self.pdbs.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda _o, n: self._enqueue(n), on_delete=self._enqueue))
        self.pods.add_event_handler(EventHandler(
            on_add=self._on_pod, on_update=self._on_pod_update, on_delete=self._on_pod))
        for workloads in (self.replicasets, self.deployments):
            workloads.add_event_handler(EventHandler(
                on_add=self._on_workload, on_update=lambda _o, n: self._on_workload(n), on_delete=self._on_workload))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 1, kind="PodDisruptionBudget"))
        finally:
            await self.queue.shut_down()

    # --- event handlers ---------------------------------------------------------------------
    def _enqueue(self, pdb: PodDisruptionBudget) -> None:
        self.queue.add(pdb.key)

    def _on_pod(self, pod: Pod) -> None:
        for pdb in self.pdbs.store.by_index("namespace", pod.metadata.namespace or ""):
            selector = _selector(pdb)
            if selector is not None and selector.matches(pod.metadata.labels):
                self.queue.add(pdb.key)

    def _on_pod_update(self, old: Pod, cur: Pod) -> None:
        if old.metadata.labels != cur.metadata.labels:
            self._on_pod(old)
        self._on_pod(cur)

    def _on_workload(self, workload: ReplicaSet | Deployment) -> None:
        for pdb in self.pdbs.store.by_index("namespace", workload.metadata.namespace or ""):
            self.queue.add(pdb.key)

    # --- expected scale -----------------------------------------------------------------------
    async def _find_scale(self, namespace: str, ref: OwnerReference) -> tuple[str, int] | None:
        if ref.kind == "ReplicaSet" and ref.api_version == "apps/v1":
            rs = self.replicasets.store.get_by_name(namespace, ref.name)
            if rs is None or rs.metadata.uid != ref.uid:
                return None
            owner = rs.metadata.controller_ref()
            if owner is not None and owner.kind == "Deployment" and owner.api_version == "apps/v1":
                return await self._find_scale(namespace, owner)
            return ref.uid, rs.spec.replicas if rs.spec.replicas is not None else 1
        if ref.kind == "Deployment" and ref.api_version == "apps/v1":
            d = self.deployments.store.get_by_name(namespace, ref.name)
            if d is None or d.metadata.uid != ref.uid:
                return None
            return ref.uid, d.spec.replicas if d.spec.replicas is not None else 1
        return await self._scale_subresource(namespace, ref)

    async def _scale_subresource(self, namespace: str, ref: OwnerReference) -> tuple[str, int] | None:
        """Any other controller: its `scale` subresource, as upstream's generic finder reads it."""
        info = resource_for_kind(ref.api_version, ref.kind)
        if info is None or "scale" not in info.subresources:
            return None
        try:
            scale = await self.client.request("GET", info.object_path(ref.name, namespace, "scale"))
        except ApiError:
            return None
        if not isinstance(scale, dict) or (scale.get("metadata") or {}).get("uid") != ref.uid:
            return None
        return ref.uid, int((scale.get("spec") or {}).get("replicas") or 0)

    # --- reconcile ------------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        pdb = self.pdbs.store.get_by_name(req.namespace, req.name)
        if pdb is None or pdb.metadata.deletion_timestamp is not None:
            return None
        try:
            return await self._try_sync(pdb)
        except LookupError as e:
            self.recorder.event(pdb, EVENT_WARNING, "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {e}")
            await self._fail_safe(pdb, str(e))
            raise

    async def _try_sync(self, pdb: PodDisruptionBudget) -> Result | None:
        selector = _selector(pdb)
        pods = [p for p in self.pods.store.by_index("namespace", pdb.metadata.namespace or "")
                if selector is not None and selector.matches(p.metadata.labels)]
        if not pods:
            self.recorder.event(pdb, EVENT_NORMAL, "NoPods", "No matching pods found")
        budget = await expected_budget(pdb, pods, self._find_scale)
        if budget.unmanaged_pods:
            shown = pdb.spec.selector.to_dict() if pdb.spec.selector else {}
            self.recorder.event(pdb, EVENT_WARNING, "UnmanagedPods", _UNMANAGED.format(selector=shown))
        now = self.now()
        disrupted, recheck = disrupted_pods(pdb, pods, now)
        status = new_status(pdb, budget=budget, healthy=current_healthy(pods, disrupted), disrupted=disrupted,
                            now=now)
        if status_changed(pdb.status, status):
            await self.client.update_status(pdb.model_copy(update={"status": status}))
            logger.debug("Updated status", extra={"pdb": pdb.key, "allowed": status.disruptions_allowed,
                                                  "healthy": status.current_healthy})
        if recheck is not None:
            return Result(requeue_after=max(0.0, (recheck - now).total_seconds()) + 1.0)
        return None

    async def _fail_safe(self, pdb: PodDisruptionBudget, message: str) -> None:
        status = pdb.status.model_copy(deep=True)
        status.disruptions_allowed = 0
        status.observed_generation = pdb.metadata.generation
        conditions = [c for c in status.conditions or [] if c.type != DISRUPTION_ALLOWED_CONDITION]
        previous = next((c for c in status.conditions or [] if c.type == DISRUPTION_ALLOWED_CONDITION), None)
        conditions.append(PodDisruptionBudgetCondition(
            type=DISRUPTION_ALLOWED_CONDITION, status="False", reason=SYNC_FAILED_REASON, message=message,
            observed_generation=pdb.metadata.generation,
            last_transition_time=previous.last_transition_time if previous else format_time(self.now())))
        status.conditions = conditions
        try:
            await self.client.update_status(pdb.model_copy(update={"status": status}))
        except ApiError as e:
            logger.debug("Fail-safe status not written", extra={"pdb": pdb.key, "error": str(e)})
