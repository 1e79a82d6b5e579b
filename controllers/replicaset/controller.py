"""The ReplicaSet controller: keep spec.replicas active pods for every ReplicaSet.

Mirrors pkg/controller/replicaset/replica_set.go. Informers on ReplicaSets and Pods; pods are
indexed by the uid of their controller, and orphans by namespace. Pod events are mapped to
the owning ReplicaSet through the pod's controllerRef (orphans to every ReplicaSet whose
selector matches them), so a reconcile is a lookup, never a scan of all pods.

`reconcile` is level-triggered and safe to run twice or after a restart:
1. read the ReplicaSet from the cache (gone: drop its expectations, done);
2. claim its pods: active pods it controls and still selects, plus matching orphans it
   adopts (see `controllers.common.claim`);
3. if its expectations are met (see `expectations.py`), create or delete the difference to
   spec.replicas: creates from the template in slow-start batches, deletes the cheapest
   pods first (see `deletion.py`); while expectations are unmet the cache is known to lag
   this controller's own writes, so it does not act on pod counts;
4. write status through the `/status` subresource when it changed, conditional on the
   cached resourceVersion.
A restarted process has no expectations and trusts its freshly listed cache, which already
holds every pod the previous process created, so a SIGKILL never leads to extra pods.
"""

from __future__ import annotations

import asyncio
import functools
import logging

from controllers.common import (
    CONTROLLER_UID_INDEX,
    ORPHAN_NAMESPACE_INDEX,
    ClaimActions,
    claim_objects,
    controller_uid_index,
    is_pod_active,
    orphan_namespace_index,
    resolve_controller_ref,
)
from controllers.common.batch import gather_failures, slow_start_batch
from controllers.context import ControllerContext
from controllers.replicaset.deletion import pods_to_delete
from controllers.replicaset.expectations import ControllerExpectations
from controllers.replicaset.kinds import REPLICA_SET, REPLICATION_CONTROLLER, Managed, ManagedKind, managed_selector
from controllers.replicaset.pod_control import may_have_been_created, pod_from_template
from controllers.replicaset.status import calculate_status, status_changed
from kube.api import Pod
from kube.cache import EventHandler
from kube.controller import Request, Result, TerminalError, run_workers
from kube.errors import ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.podutil import is_pod_ready
from kube.selectors import LabelSelector
from kube.workqueue import WorkQueue

__all__ = ["BURST_REPLICAS", "ReplicaSetController", "ReplicationManager"]

logger = logging.getLogger(__name__)

BURST_REPLICAS = 500
"""At most this many pods are created or deleted by one reconcile (upstream burstReplicas)."""

UNKNOWN_OUTCOME_GRACE = 30.0
"""How long to keep waiting for a pod whose create failed with an unknown outcome."""


def desired_replicas(rs: Managed) -> int:
    return rs.spec.replicas if rs.spec.replicas is not None else 1


class ReplicaSetController:
    """Keeps the pods of every object of one `ManagedKind` (ReplicaSets by default)."""

    def __init__(self, ctx: ControllerContext, kind: ManagedKind = REPLICA_SET) -> None:
        self.kind = kind
        self.name = kind.name
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component=kind.component, clock=ctx.clock)
        self.now = ctx.now
        self.workers = ctx.config.concurrent_rc_syncs if kind is REPLICATION_CONTROLLER \
            else ctx.config.concurrent_replicaset_syncs
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.expectations = ControllerExpectations(clock=ctx.clock)
        self.rs_informer = ctx.informers.informer_for(kind.model)
        self.pod_informer = ctx.informers.informer_for(Pod)
        self.pod_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index,
                                        ORPHAN_NAMESPACE_INDEX: orphan_namespace_index})
        self.rs_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._on_rs_delete))
        self.pod_informer.add_event_handler(EventHandler(
            on_add=self._on_pod_add, on_update=self._on_pod_update, on_delete=self._on_pod_delete))

    async def run(self) -> None:
        kind_name = self.kind.kind
        logger.info("Starting controller", extra={"controller": self.name, "workers": self.workers})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, self.workers,
                                           kind=kind_name))
        finally:
            await self.queue.shut_down()

    # --- event handlers: map events to ReplicaSet keys, never block -------------------------
    def _enqueue(self, rs: Managed) -> None:
        self.queue.add(rs.key)

    def _on_rs_delete(self, rs: Managed) -> None:
        self.expectations.delete_expectations(rs.key)
        self.queue.add(rs.key)

    def _owner_of(self, pod: Pod) -> Managed | None:
        return resolve_controller_ref(self.rs_informer.store, pod.metadata.namespace,
                                      pod.metadata.controller_ref(), self.kind.kind)

    def _enqueue_matching(self, pod: Pod) -> None:
        """An orphan changed: every ReplicaSet that would adopt it must look."""
        for rs in self.rs_informer.store.by_index("namespace", pod.metadata.namespace or ""):
            selector = managed_selector(rs)
            if selector is not None and selector.matches(pod.metadata.labels):
                self.queue.add(rs.key)

    def _on_pod_add(self, pod: Pod) -> None:
        if pod.metadata.deletion_timestamp is not None:
            self._on_pod_delete(pod)  # seen for the first time already terminating (e.g. after a relist)
            return
        if pod.metadata.controller_ref() is None:
            self._enqueue_matching(pod)
            return
        rs = self._owner_of(pod)
        if rs is not None:
            self.expectations.creation_observed(rs.key)
            self.queue.add(rs.key)

    def _on_pod_update(self, old: Pod, cur: Pod) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        if cur.metadata.deletion_timestamp is not None:
            # A terminating pod no longer counts; treat it as deleted now, not when it is gone.
            self._on_pod_delete(cur)
            return
        old_ref, cur_ref = old.metadata.controller_ref(), cur.metadata.controller_ref()
        moved = old_ref is not None and (cur_ref is None or old_ref.uid != cur_ref.uid)
        if moved and (previous := self._owner_of(old)) is not None:
            self.queue.add(previous.key)
        if cur_ref is None:
            if old.metadata.labels != cur.metadata.labels or old_ref is not None:
                self._enqueue_matching(cur)
            return
        rs = self._owner_of(cur)
        if rs is None:
            return
        self.queue.add(rs.key)
        min_ready = rs.spec.min_ready_seconds or 0
        if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
            self.queue.add_after(rs.key, min_ready + 1.0)  # re-check availability when it is due

    def _on_pod_delete(self, pod: Pod) -> None:
        rs = self._owner_of(pod)
        if rs is not None:
            self.expectations.deletion_observed(rs.key, pod.key)
            self.queue.add(rs.key)

    # --- reconcile ---------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        """Bring one ReplicaSet's pods and status in line with its spec (see the module doc)."""
        rs = self.rs_informer.store.get_by_name(req.namespace, req.name)
        if rs is None:
            self.expectations.delete_expectations(req.key)
            return None
        selector = managed_selector(rs)
        if selector is None:
            raise TerminalError(f"{self.kind.kind} {req.key} has an empty or invalid selector")
        needs_sync = self.expectations.satisfied(req.key)
        pods = await self._claim_pods(rs, selector)
        manage_error: Exception | None = None
        if needs_sync and rs.metadata.deletion_timestamp is None:
            try:
                await self._manage_replicas(rs, pods, selector)
            except Exception as e:  # noqa: BLE001 - status is still written; re-raised below
                manage_error = e
        ready, available = await self._sync_status(rs, pods)
        if manage_error is not None:
            raise manage_error
        return self._requeue(rs, ready=ready, available=available)

    async def _claim_pods(self, rs: Managed, selector: LabelSelector) -> list[Pod]:
        store = self.pod_informer.store
        owned = [p for p in store.by_index(CONTROLLER_UID_INDEX, rs.metadata.uid or "") if is_pod_active(p)]
        orphans = [p for p in store.by_index(ORPHAN_NAMESPACE_INDEX, rs.metadata.namespace or "")
                   if is_pod_active(p)]

        async def can_adopt() -> bool:
            try:
                fresh = await self.client.get(self.kind.model, rs.metadata.name or "", rs.metadata.namespace)
            except NotFound:
                return False
            return fresh.metadata.uid == rs.metadata.uid and fresh.metadata.deletion_timestamp is None

        return await claim_objects(owner=rs, selector=selector, owned=owned, orphans=orphans,
                                   actions=ClaimActions(client=self.client, can_adopt=can_adopt))

    async def _manage_replicas(self, rs: Managed, pods: list[Pod], selector: LabelSelector) -> None:
        diff = len(pods) - desired_replicas(rs)
        if diff < 0:
            if not selector.matches(rs.spec.template.metadata.labels):
                raise TerminalError(f"{self.kind.kind} {rs.key}: the pod template's labels do not match the selector")
            await self._create_pods(rs, min(-diff, BURST_REPLICAS))
        elif diff > 0:
            await self._delete_pods(rs, pods_to_delete(pods, min(diff, BURST_REPLICAS)))

    async def _create_pods(self, rs: Managed, count: int) -> None:
        key = rs.key
        self.expectations.expect_creations(key, count)
        logger.info("Creating pods", extra={"replicaset": key, "count": count})
        successes, failures = await slow_start_batch(count, lambda: self._create_pod(rs))
        unknown = sum(1 for e in failures if may_have_been_created(e))
        # Pods that will never appear must not be waited for; those that might, briefly are.
        for _ in range(count - successes - unknown):
            self.expectations.creation_observed(key)
        if unknown:
            self.expectations.expire_within(key, UNKNOWN_OUTCOME_GRACE)
        if failures:
            raise failures[0]

    async def _create_pod(self, rs: Managed) -> None:
        try:
            pod = await self.client.create(pod_from_template(rs))
        except ApiError as e:
            self.recorder.event(rs, EVENT_WARNING, "FailedCreate", f"Error creating: {e.message}")
            raise
        logger.debug("Created pod", extra={"replicaset": rs.key, "pod": pod.metadata.name})
        self.recorder.event(rs, EVENT_NORMAL, "SuccessfulCreate", f"Created pod: {pod.metadata.name}")

    async def _delete_pods(self, rs: Managed, victims: list[Pod]) -> None:
        key = rs.key
        self.expectations.expect_deletions(key, [p.key for p in victims])
        logger.info("Deleting pods", extra={"replicaset": key, "count": len(victims)})
        failures = await gather_failures([functools.partial(self._delete_pod, key, p, rs) for p in victims])
        if failures:
            raise failures[0]

    async def _delete_pod(self, key: str, pod: Pod, rs: Managed | None = None) -> None:
        try:
            await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace, uid=pod.metadata.uid)
        except NotFound:
            self.expectations.deletion_observed(key, pod.key)  # already gone
            return
        except Exception:
            self.expectations.deletion_observed(key, pod.key)  # this call will cause no delete event
            raise
        logger.debug("Deleted pod", extra={"replicaset": key, "pod": pod.metadata.name})
        if rs is not None:
            self.recorder.event(rs, EVENT_NORMAL, "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")

    async def _sync_status(self, rs: Managed, pods: list[Pod]) -> tuple[int, int]:
        """Write status if it changed; return (readyReplicas, availableReplicas)."""
        status = calculate_status(rs, pods, now=self.now())
        if status_changed(rs.status, status):
            updated = rs.model_copy(update={"status": status})
            await self.client.update_status(updated)
            logger.debug("Updated status", extra={"replicaset": rs.key, "replicas": status.replicas,
                                                  "ready": status.ready_replicas})
        return status.ready_replicas or 0, status.available_replicas or 0

    def _requeue(self, rs: Managed, *, ready: int, available: int) -> Result | None:
        delays: list[float] = []
        if (pending := self.expectations.time_until_expired(rs.key)) is not None:
            delays.append(pending + 1.0)  # nothing may wake us if an expected event was lost
        want, min_ready = desired_replicas(rs), rs.spec.min_ready_seconds or 0
        if min_ready > 0 and ready == want and available != want:
            delays.append(float(min_ready))
        return Result(requeue_after=min(delays)) if delays else None


class ReplicationManager(ReplicaSetController):
    """The ReplicationController controller: the same logic over core/v1 ReplicationControllers."""

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx, REPLICATION_CONTROLLER)
