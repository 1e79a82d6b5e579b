"""The DaemonSet controller: one pod of each DaemonSet on every eligible node.

Mirrors pkg/controller/daemon/daemon_controller.go (and update.go for rollouts). Informers on
DaemonSets, Pods, Nodes and ControllerRevisions; pods and revisions are indexed by the uid of
their controller. Pod and revision events go to the owning DaemonSet; node events (added,
deleted, labels, taints or unschedulable changed) to every DaemonSet.

`reconcile` is level-triggered and safe to run twice or after a restart:
1. read the DaemonSet from the cache (gone: drop its expectations, done);
2. claim its pods (see `controllers.common.claim`) and group them by node: the node they
   are bound to, or the one their node affinity pins them to while unscheduled;
3. construct its history (see `history.py`): the current revision's hash is the one new pods
   carry;
4. if its expectations are met and it is not being deleted: the manage step creates a pod
   (pinned to the node, bound by the scheduler) on every node that should run one and has
   none, deletes failed pods, extra pods, pods on nodes that may no longer run one and pods
   on nodes that no longer exist (upstream leaves those bound to a vanished node to the pod
   garbage collector); then, for RollingUpdate, the rolling step (see `rolling.py`) deletes
   old pods or surges new ones; OnDelete replaces a pod only once someone deletes it; then
   old revisions beyond revisionHistoryLimit are removed;
5. write status through `/status` when it changed, conditional on the cached resourceVersion.
An untolerated NoSchedule taint stops new pods but keeps existing ones; NoExecute eviction is
the taint manager's job, not this controller's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import defaultdict
from collections.abc import Callable

from controllers.common import (
    CONTROLLER_UID_INDEX,
    ORPHAN_NAMESPACE_INDEX,
    ClaimActions,
    claim_objects,
    controller_uid_index,
    orphan_namespace_index,
    resolve_controller_ref,
    selector_of,
)
from controllers.common.batch import gather_failures, slow_start_batch
from controllers.context import ControllerContext
from controllers.daemonset.history import REVISION_HASH_LABEL, cleanup_history, construct_history
from controllers.daemonset.placement import Placement, daemon_tolerations, node_should_run_daemon_pod, target_node_name
from controllers.daemonset.pods import daemon_pod
from controllers.daemonset.rolling import is_updated, plan_rolling_update, surge_and_unavailable
from controllers.daemonset.status import calculate_status, status_changed
from controllers.replicaset.expectations import ControllerExpectations
from kube.api import ControllerRevision, DaemonSet, Node, Pod
from kube.cache import EventHandler
from kube.controller import Request, Result, TerminalError, run_workers
from kube.errors import ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.podutil import is_pod_available, is_pod_ready
from kube.workqueue import WorkQueue

__all__ = ["DaemonSetsController"]

logger = logging.getLogger(__name__)

BURST_REPLICAS = 250
"""At most this many pods are created by one reconcile (upstream burstReplicas)."""

NodePods = dict[str, list[Pod]]


class DaemonSetsController:
    name = "daemonset"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component="daemonset-controller", clock=ctx.clock)
        self.now = ctx.now
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        # Creations and deletions are expected separately: one sync may do both (a rolling step).
        self.expectations = ControllerExpectations(clock=ctx.clock)
        self.deletions = ControllerExpectations(clock=ctx.clock)
        self.ds_informer = ctx.informers.informer_for(DaemonSet)
        self.pod_informer = ctx.informers.informer_for(Pod)
        self.node_informer = ctx.informers.informer_for(Node)
        self.revision_informer = ctx.informers.informer_for(ControllerRevision)
        self.pod_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index,
                                        ORPHAN_NAMESPACE_INDEX: orphan_namespace_index})
        self.revision_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        self.ds_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._on_ds_delete))
        self.pod_informer.add_event_handler(EventHandler(
            on_add=self._on_pod_add, on_update=self._on_pod_update, on_delete=self._on_pod_delete))
        self.node_informer.add_event_handler(EventHandler(
            on_add=self._enqueue_all, on_update=self._on_node_update, on_delete=self._enqueue_all))
        self.revision_informer.add_event_handler(EventHandler(
            on_add=self._on_revision, on_update=lambda old, new: self._on_revision(new),
            on_delete=self._on_revision))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, 2, kind="DaemonSet"))
        finally:
            await self.queue.shut_down()

    # --- event handlers: map events to DaemonSet keys, never block -------------------------
    def _enqueue(self, ds: DaemonSet) -> None:
        self.queue.add(ds.key)

    def _enqueue_all(self, _node: Node) -> None:
        for ds in self.ds_informer.store.list():
            self.queue.add(ds.key)

    def _on_node_update(self, old: Node, cur: Node) -> None:
        if (old.metadata.labels != cur.metadata.labels or old.spec.taints != cur.spec.taints
                or old.spec.unschedulable != cur.spec.unschedulable):
            self._enqueue_all(cur)

    def _on_ds_delete(self, ds: DaemonSet) -> None:
        self.expectations.delete_expectations(ds.key)
        self.deletions.delete_expectations(ds.key)
        self.queue.add(ds.key)

    def _owner_of(self, obj: Pod | ControllerRevision) -> DaemonSet | None:
        return resolve_controller_ref(self.ds_informer.store, obj.metadata.namespace,
                                      obj.metadata.controller_ref(), "DaemonSet")

    def _enqueue_matching(self, pod: Pod) -> None:
        for ds in self.ds_informer.store.by_index("namespace", pod.metadata.namespace or ""):
            selector = selector_of(ds.spec.selector)
            if selector is not None and selector.matches(pod.metadata.labels):
                self.queue.add(ds.key)

    def _on_revision(self, revision: ControllerRevision) -> None:
        if (ds := self._owner_of(revision)) is not None:
            self.queue.add(ds.key)

    def _on_pod_add(self, pod: Pod) -> None:
        if pod.metadata.deletion_timestamp is not None:
            self._on_pod_delete(pod)
            return
        if pod.metadata.controller_ref() is None:
            self._enqueue_matching(pod)
        elif (ds := self._owner_of(pod)) is not None:
            self.expectations.creation_observed(ds.key)
            self.queue.add(ds.key)

    def _on_pod_update(self, old: Pod, cur: Pod) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        if cur.metadata.deletion_timestamp is not None:
            self._on_pod_delete(cur)
            return
        if (previous := self._owner_of(old)) is not None:
            self.queue.add(previous.key)
        if cur.metadata.controller_ref() is None:
            self._enqueue_matching(cur)
        elif (ds := self._owner_of(cur)) is not None:
            self.queue.add(ds.key)
            min_ready = ds.spec.min_ready_seconds or 0
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.queue.add_after(ds.key, min_ready + 1.0)

    def _on_pod_delete(self, pod: Pod) -> None:
        if (ds := self._owner_of(pod)) is not None:
            self.deletions.deletion_observed(ds.key, pod.key)
            self.queue.add(ds.key)

    # --- reconcile ---------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        """Bring one DaemonSet's pods, history and status in line with its spec (see the module doc)."""
        ds = self.ds_informer.store.get_by_name(req.namespace, req.name)
        if ds is None:
            self.expectations.delete_expectations(req.key)
            self.deletions.delete_expectations(req.key)
            return None
        if selector_of(ds.spec.selector) is None:
            raise TerminalError(f"DaemonSet {req.key} has an empty or invalid selector")
        # Asked before the pods are read, as upstream does: adds and deletes seen while this sync
        # awaits its writes could satisfy the expectations while `node_to_pods` stays this snapshot.
        satisfied = self.expectations.satisfied(req.key) and self.deletions.satisfied(req.key)
        node_to_pods = self._by_node(await self._claim_pods(ds))
        tolerations = daemon_tolerations(ds.spec.template.spec)
        placements = {str(n.metadata.name): node_should_run_daemon_pod(ds.spec.template.spec, n, tolerations)
                      for n in self.node_informer.store.list()}
        if ds.metadata.deletion_timestamp is not None:
            await self._sync_status(ds, node_to_pods, placements, hash_="")
            return None
        revisions = self.revision_informer.store.by_index(CONTROLLER_UID_INDEX, ds.metadata.uid or "")
        current, old = await construct_history(self.client, ds, revisions)
        hash_ = (current.metadata.labels or {}).get(REVISION_HASH_LABEL, "")
        if satisfied:
            wrote = await self._manage(ds, node_to_pods, placements, hash_)
            strategy = ds.spec.update_strategy
            # Roll only when manage changed nothing: the step must see every node's current pods
            # (upstream re-reads them; the events of manage's writes bring this sync back).
            if not wrote and (strategy is None or strategy.type in (None, "RollingUpdate")):
                await self._rolling_update(ds, node_to_pods, placements, hash_)
            live = {h for pods in node_to_pods.values() for p in pods
                    if (h := (p.metadata.labels or {}).get(REVISION_HASH_LABEL))}
            await cleanup_history(self.client, ds, old, live | {hash_})
        await self._sync_status(ds, node_to_pods, placements, hash_=hash_)
        return self._requeue(ds)

    async def _claim_pods(self, ds: DaemonSet) -> list[Pod]:
        selector = selector_of(ds.spec.selector)
        assert selector is not None
        store = self.pod_informer.store
        owned = store.by_index(CONTROLLER_UID_INDEX, ds.metadata.uid or "")
        orphans = store.by_index(ORPHAN_NAMESPACE_INDEX, ds.metadata.namespace or "")

        async def can_adopt() -> bool:
            try:
                fresh = await self.client.get(DaemonSet, ds.metadata.name or "", ds.metadata.namespace)
            except NotFound:
                return False
            return fresh.metadata.uid == ds.metadata.uid and fresh.metadata.deletion_timestamp is None

        return await claim_objects(owner=ds, selector=selector, owned=owned, orphans=orphans,
                                   actions=ClaimActions(client=self.client, can_adopt=can_adopt))

    @staticmethod
    def _by_node(pods: list[Pod]) -> NodePods:
        grouped: NodePods = defaultdict(list)
        for pod in pods:
            if (node := target_node_name(pod)) is not None:
                grouped[node].append(pod)
        return grouped

    def _available(self, ds: DaemonSet) -> Callable[[Pod], bool]:
        min_ready, now = ds.spec.min_ready_seconds or 0, self.now()
        return lambda pod: is_pod_available(pod, min_ready_seconds=min_ready, now=now)

    async def _manage(self, ds: DaemonSet, node_to_pods: NodePods, placements: dict[str, Placement],
                      hash_: str) -> bool:
        """podsShouldBeOnNode for every node: create where missing, delete what must go; True if it wrote."""
        create_on: list[str] = []
        victims: list[Pod] = []
        for node, placement in sorted(placements.items()):
            pods = [p for p in node_to_pods.get(node, []) if p.metadata.deletion_timestamp is None]
            if placement.should_run and not pods:
                create_on.append(node)
            elif placement.should_continue_running:
                victims += self._failed_or_extra(ds, node, pods, hash_)
            else:
                victims += pods
        victims += [p for node, pods in node_to_pods.items() if node not in placements
                    for p in pods if p.metadata.deletion_timestamp is None]
        await self._sync_nodes(ds, victims, create_on[:BURST_REPLICAS], hash_)
        return bool(victims or create_on)

    def _failed_or_extra(self, ds: DaemonSet, node: str, pods: list[Pod], hash_: str) -> list[Pod]:
        victims, running = [], []
        for pod in pods:
            if pod.status is not None and pod.status.phase == "Failed":
                self.recorder.event(ds, EVENT_WARNING, "FailedDaemonPod",
                                    f"Found failed daemon pod {pod.key} on node {node}, will try to kill it")
                victims.append(pod)
            elif pod.status is not None and pod.status.phase == "Succeeded":
                victims.append(pod)
            else:
                running.append(pod)
        running.sort(key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name or ""))
        surge, _ = surge_and_unavailable(ds, 1)
        if surge == 0:
            return victims + running[1:]
        keep_new = next((p for p in running if is_updated(p, hash_)), None)
        keep_old = next((p for p in running if not is_updated(p, hash_)), None)
        return victims + [p for p in running if p is not keep_new and p is not keep_old]

    async def _rolling_update(self, ds: DaemonSet, node_to_pods: NodePods, placements: dict[str, Placement],
                              hash_: str) -> None:
        desired = sum(1 for p in placements.values() if p.should_run)
        surge, unavailable = surge_and_unavailable(ds, desired)
        plan = plan_rolling_update(node_to_pods=node_to_pods, hash_=hash_, max_surge=surge,
                                   max_unavailable=unavailable, available=self._available(ds),
                                   should_run=lambda n: n in placements and placements[n].should_run)
        if plan.delete or plan.create_on:
            logger.info("Rolling update step", extra={"daemonset": ds.key, "delete": len(plan.delete),
                                                      "create": len(plan.create_on)})
            await self._sync_nodes(ds, plan.delete, plan.create_on, hash_)

    async def _sync_nodes(self, ds: DaemonSet, victims: list[Pod], create_on: list[str], hash_: str) -> None:
        """Create pods on `create_on` and delete `victims`, expecting to observe each of those writes."""
        if not victims and not create_on:
            return
        key = ds.key
        if create_on:
            self.expectations.expect_creations(key, len(create_on))
        if victims:
            self.deletions.expect_deletions(key, [p.key for p in victims])
        nodes = iter(create_on)
        successes, failures = await slow_start_batch(len(create_on), lambda: self._create_pod(ds, next(nodes), hash_))
        for _ in range(len(create_on) - successes):
            self.expectations.creation_observed(key)  # a pod that was never created will never be observed
        failures += await gather_failures([functools.partial(self._delete_pod, ds, p) for p in victims])
        if failures:
            raise failures[0]

    async def _create_pod(self, ds: DaemonSet, node: str, hash_: str) -> None:
        try:
            pod = await self.client.create(daemon_pod(ds, node_name=node, hash_=hash_))
        except ApiError as e:
            self.recorder.event(ds, EVENT_WARNING, "FailedCreate", f"Error creating: {e.message}")
            raise
        logger.debug("Created pod", extra={"daemonset": ds.key, "pod": pod.metadata.name, "node": node})
        self.recorder.event(ds, EVENT_NORMAL, "SuccessfulCreate", f"Created pod: {pod.metadata.name}")

    async def _delete_pod(self, ds: DaemonSet, pod: Pod) -> None:
        try:
            await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace, uid=pod.metadata.uid)
        except NotFound:
            self.deletions.deletion_observed(ds.key, pod.key)
            return
        except Exception:
            self.deletions.deletion_observed(ds.key, pod.key)
            raise
        logger.debug("Deleted pod", extra={"daemonset": ds.key, "pod": pod.metadata.name})
        self.recorder.event(ds, EVENT_NORMAL, "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")

    async def _sync_status(self, ds: DaemonSet, node_to_pods: NodePods, placements: dict[str, Placement],
                           *, hash_: str) -> None:
        status = calculate_status(ds, node_to_pods=node_to_pods,
                                  should_run={n: p.should_run for n, p in placements.items()},
                                  updated=lambda p: is_updated(p, hash_), available=self._available(ds))
        if status_changed(ds.status, status):
            await self.client.update_status(ds.model_copy(update={"status": status}))
            logger.debug("Updated status", extra={"daemonset": ds.key, "desired": status.desired_number_scheduled,
                                                  "ready": status.number_ready})

    def _requeue(self, ds: DaemonSet) -> Result | None:
        delays: list[float] = []
        for record in (self.expectations, self.deletions):
            if (pending := record.time_until_expired(ds.key)) is not None:
                delays.append(pending + 1.0)
        min_ready = ds.spec.min_ready_seconds or 0
        if min_ready > 0 and (ds.status.number_available or 0) < ds.status.number_ready:
            delays.append(float(min_ready))
        return Result(requeue_after=min(delays)) if delays else None

