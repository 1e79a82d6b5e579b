"""The Deployment controller: one ReplicaSet per pod template, rolled out by the strategy.

Mirrors pkg/controller/deployment (deployment_controller.go, sync.go, rolling.go,
recreate.go, progress.go). Informers on Deployments, ReplicaSets (indexed by controller uid,
orphans by namespace) and Pods (shared with the ReplicaSet controller, indexed by controller
uid). ReplicaSet events map to the owning Deployment through the controllerRef; orphans to
every Deployment selecting them; pod deletions wake Recreate rollouts.

`reconcile` is level-triggered and restart-safe:
1. read the Deployment from the cache; claim its ReplicaSets (adopt matching orphans,
   release those it no longer selects);
2. being deleted: only status is written; paused: only scaling (spread over the live
   ReplicaSets) and history cleanup, no new ReplicaSet;
3. the new ReplicaSet is the one whose template equals the Deployment's, ignoring the
   pod-template-hash label; if there is none, create `<deployment>-<hash>`. The name is a
   function of the template (and status.collisionCount), so a retry or a restarted process
   can never create a second ReplicaSet for one template: AlreadyExists is answered by
   reading the existing one, which is ours (the cache lagged) or a hash collision, which
   bumps status.collisionCount (a compare-and-swap on the Deployment) and retries;
4. scale the ReplicaSets by one step of `strategy` (proportional scaling on a scaling
   event, else RollingUpdate or Recreate), with merge patches conditional on the cached
   resourceVersion, so a stale cache gets a Conflict, never a wrong write; the next step
   follows from the ReplicaSet status changes it causes;
5. delete old, empty ReplicaSets beyond spec.revisionHistoryLimit (default 10);
6. write status (counts, Available, Progressing) through `/status` when it changed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.common import (
    CONTROLLER_UID_INDEX,
    ORPHAN_NAMESPACE_INDEX,
    ClaimActions,
    claim_objects,
    controller_uid_index,
    is_controlled_by,
    new_controller_ref,
    orphan_namespace_index,
    resolve_controller_ref,
    selector_of,
)
from controllers.context import ControllerContext
from controllers.deployment.annotations import (
    REVISION_ANNOTATION,
    max_revision,
    new_replicaset_annotations,
    replicas_annotations,
    revision,
)
from controllers.deployment.conditions import (
    FOUND_NEW_RS,
    NEW_RS_CREATED,
    PROGRESSING,
    get_condition,
    new_condition,
    progress_requeue_after,
    set_condition,
    sync_paused_condition,
    sync_progress,
)
from controllers.deployment.fenceposts import is_rolling_update
from controllers.deployment.status import calculate_status
from controllers.deployment.strategy import (
    Plan,
    is_scaling_event,
    new_replicaset_replicas,
    plan_proportional,
    plan_recreate,
    plan_rolling,
)
from controllers.deployment.util import (
    POD_TEMPLATE_HASH_LABEL,
    compute_hash,
    equal_ignore_hash,
    selector_with_label,
    with_label,
)
from kube.api import (
    Deployment,
    DeploymentStatus,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicaSetSpec,
)
from kube.cache import EventHandler
from kube.controller import Request, Result, TerminalError, run_workers
from kube.errors import AlreadyExists, NotFound
from kube.events import EVENT_NORMAL, EventRecorder
from kube.podutil import is_pod_terminal
from kube.selectors import LabelSelector
from kube.workqueue import WorkQueue

__all__ = ["DeploymentController", "ReplicaSetCollision"]

logger = logging.getLogger(__name__)

DEFAULT_REVISION_HISTORY_LIMIT = 10


class ReplicaSetCollision(Exception):
    """The new ReplicaSet's name is taken by a different ReplicaSet; collisionCount was bumped."""


def _creation_order(rs: ReplicaSet) -> tuple[str, str]:
    return rs.metadata.creation_timestamp or "", rs.metadata.name or ""


def find_new_and_old(d: Deployment, replicasets: list[ReplicaSet]) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
    """The oldest ReplicaSet whose template equals the Deployment's, and all the others."""
    ordered = sorted(replicasets, key=_creation_order)
    new = next((rs for rs in ordered if equal_ignore_hash(rs.spec.template, d.spec.template)), None)
    return new, [rs for rs in ordered if rs is not new]


class DeploymentController:
    name = "deployment"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component="deployment-controller", clock=ctx.clock)
        self.now = ctx.now
        self.workers = ctx.config.concurrent_deployment_syncs
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.d_informer = ctx.informers.informer_for(Deployment)
        self.rs_informer = ctx.informers.informer_for(ReplicaSet)
        self.pod_informer = ctx.informers.informer_for(Pod)
        self.rs_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index,
                                       ORPHAN_NAMESPACE_INDEX: orphan_namespace_index})
        self.pod_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        self.d_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._enqueue))
        self.rs_informer.add_event_handler(EventHandler(
            on_add=self._on_rs_add, on_update=self._on_rs_update, on_delete=self._on_rs_delete))
        self.pod_informer.add_event_handler(EventHandler(on_delete=self._on_pod_delete))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name, "workers": self.workers})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, self.workers,
                                           kind="Deployment"))
        finally:
            await self.queue.shut_down()

    # --- event handlers -------------------------------------------------------------------
    def _enqueue(self, d: Deployment) -> None:
        self.queue.add(d.key)

    def _owner_of(self, rs: ReplicaSet) -> Deployment | None:
        return resolve_controller_ref(self.d_informer.store, rs.metadata.namespace,
                                      rs.metadata.controller_ref(), "Deployment")

    def _enqueue_owner(self, rs: ReplicaSet) -> None:
        if (d := self._owner_of(rs)) is not None:
            self.queue.add(d.key)

    def _enqueue_matching(self, rs: ReplicaSet) -> None:
        for d in self.d_informer.store.by_index("namespace", rs.metadata.namespace or ""):
            selector = selector_of(d.spec.selector)
            if selector is not None and selector.matches(rs.metadata.labels):
                self.queue.add(d.key)

    def _on_rs_add(self, rs: ReplicaSet) -> None:
        if rs.metadata.controller_ref() is None:
            self._enqueue_matching(rs)
        else:
            self._enqueue_owner(rs)

    def _on_rs_update(self, old: ReplicaSet, cur: ReplicaSet) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        old_ref, cur_ref = old.metadata.controller_ref(), cur.metadata.controller_ref()
        if old_ref is not None and (cur_ref is None or old_ref.uid != cur_ref.uid):
            self._enqueue_owner(old)
        if cur_ref is not None:
            self._enqueue_owner(cur)
        elif old.metadata.labels != cur.metadata.labels or old_ref is not None:
            self._enqueue_matching(cur)

    def _on_rs_delete(self, rs: ReplicaSet) -> None:
        self._enqueue_owner(rs)

    def _on_pod_delete(self, pod: Pod) -> None:
        # Strategies that wait for old pods to be gone (Recreate) are woken by this.
        rs = resolve_controller_ref(self.rs_informer.store, pod.metadata.namespace,
                                    pod.metadata.controller_ref(), "ReplicaSet")
        if rs is not None:
            self._enqueue_owner(rs)

    # --- reconcile ------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        """Converge one Deployment's ReplicaSets and status (see the module doc)."""
        d = self.d_informer.store.get_by_name(req.namespace, req.name)
        if d is None:
            return None
        selector = selector_of(d.spec.selector)
        if selector is None:
            raise TerminalError(f"Deployment {req.key} has an empty or invalid selector")
        replicasets = await self._claim_replicasets(d, selector)
        new_rs, old = find_new_and_old(d, replicasets)
        status = d.status.model_copy(deep=True)
        sync_paused_condition(d, status, now=self.now())
        if d.metadata.deletion_timestamp is not None:
            return await self._sync_status(d, status, new_rs=new_rs, replicasets=replicasets, progress=False)
        if d.spec.paused:
            new_rs, old = await self._scale(d, new_rs, old, plan_proportional(d, new_rs, old))
            old = await self._cleanup(d, old)
            live = [rs for rs in (new_rs, *old) if rs is not None]
            return await self._sync_status(d, status, new_rs=new_rs, replicasets=live, progress=False)
        old_pods_running = not is_rolling_update(d) and self._pods_running(old)
        d, new_rs = await self._ensure_new_replicaset(d, status, new_rs, old, old_pods_running=old_pods_running)
        if is_scaling_event(d, [new_rs, *old]):
            plan = plan_proportional(d, new_rs, old)
        elif is_rolling_update(d):
            plan = plan_rolling(d, new_rs, old)
        else:
            plan = plan_recreate(d, new_rs, old, old_pods_running=old_pods_running)
        scaled_new, old = await self._scale(d, new_rs, old, plan)
        assert scaled_new is not None
        old = await self._cleanup(d, old)
        return await self._sync_status(d, status, new_rs=scaled_new, replicasets=[scaled_new, *old], progress=True)

    def _pods_running(self, replicasets: list[ReplicaSet]) -> bool:
        """Any pod of these ReplicaSets not finished, terminating ones included (Recreate waits for them)."""
        if any(rs.status.replicas for rs in replicasets):
            return True
        return any(not is_pod_terminal(p)
                   for rs in replicasets for p in self.pod_informer.store.by_index(CONTROLLER_UID_INDEX,
                                                                                   rs.metadata.uid or ""))

    async def _claim_replicasets(self, d: Deployment, selector: LabelSelector) -> list[ReplicaSet]:
        store = self.rs_informer.store
        owned = store.by_index(CONTROLLER_UID_INDEX, d.metadata.uid or "")
        orphans = store.by_index(ORPHAN_NAMESPACE_INDEX, d.metadata.namespace or "")

        async def can_adopt() -> bool:
            try:
                fresh = await self.client.get(Deployment, d.metadata.name or "", d.metadata.namespace)
            except NotFound:
                return False
            return fresh.metadata.uid == d.metadata.uid and fresh.metadata.deletion_timestamp is None

        return await claim_objects(owner=d, selector=selector, owned=owned, orphans=orphans,
                                   actions=ClaimActions(client=self.client, can_adopt=can_adopt))

    async def _ensure_new_replicaset(self, d: Deployment, status: DeploymentStatus, new_rs: ReplicaSet | None,
                                     old: list[ReplicaSet], *,
                                     old_pods_running: bool) -> tuple[Deployment, ReplicaSet]:
        """The new ReplicaSet, created or brought up to date; `status` gets the Progressing news."""
        rev = max_revision(old) + 1
        if new_rs is None:
            new_rs = await self._create_new_replicaset(d, old, rev=rev, old_pods_running=old_pods_running)
            set_condition(status, new_condition(PROGRESSING, "True", NEW_RS_CREATED,
                                                f'Created new replica set "{new_rs.metadata.name}"', now=self.now()))
        else:
            new_rs = await self._update_new_replicaset(d, new_rs, rev=rev)
            if get_condition(status, PROGRESSING) is None:
                set_condition(status, new_condition(PROGRESSING, "True", FOUND_NEW_RS,
                                                    f'Found new replica set "{new_rs.metadata.name}"',
                                                    now=self.now()))
        current = str(revision(new_rs))
        if (d.metadata.annotations or {}).get(REVISION_ANNOTATION) != current:
            d = await self.client.patch(Deployment, d.metadata.name or "", {"metadata": {
                "resourceVersion": d.metadata.resource_version, "annotations": {REVISION_ANNOTATION: current}}},
                d.metadata.namespace)
        return d, new_rs

    def _new_replicaset(self, d: Deployment, old: list[ReplicaSet], *, rev: int, old_pods_running: bool) -> ReplicaSet:
        pod_hash = compute_hash(d.spec.template, d.status.collision_count)
        template = d.spec.template.model_copy(deep=True)
        template.metadata.labels = with_label(template.metadata.labels, POD_TEMPLATE_HASH_LABEL, pod_hash)
        return ReplicaSet(
            metadata=ObjectMeta(name=f"{d.metadata.name}-{pod_hash}", namespace=d.metadata.namespace,
                                labels=dict(template.metadata.labels),
                                annotations=new_replicaset_annotations(d, rev=rev),
                                owner_references=[new_controller_ref(d)]),
            spec=ReplicaSetSpec(replicas=new_replicaset_replicas(d, None, old, old_pods_running=old_pods_running),
                                min_ready_seconds=d.spec.min_ready_seconds,
                                selector=selector_with_label(d.spec.selector, POD_TEMPLATE_HASH_LABEL, pod_hash),
                                template=template))

    async def _create_new_replicaset(self, d: Deployment, old: list[ReplicaSet], *, rev: int,
                                     old_pods_running: bool) -> ReplicaSet:
        wanted = self._new_replicaset(d, old, rev=rev, old_pods_running=old_pods_running)
        name = wanted.metadata.name or ""
        try:
            created = await self.client.create(wanted)
            if created.spec.replicas:
                self.recorder.event(d, EVENT_NORMAL, "ScalingReplicaSet",
                                    f"Scaled up replica set {name} from 0 to {created.spec.replicas}")
        except AlreadyExists:
            existing = await self.client.get(ReplicaSet, name, d.metadata.namespace)
            if is_controlled_by(existing, d) and equal_ignore_hash(existing.spec.template, d.spec.template):
                return existing  # ours already: the cache had not seen it yet
            count = (d.status.collision_count or 0) + 1
            # Conditional on the cached resourceVersion: two racing syncs cannot both bump it.
            await self.client.update_status(d.model_copy(update={
                "status": d.status.model_copy(update={"collision_count": count})}))
            logger.info("Hash collision, bumped collisionCount", extra={"deployment": d.key, "replicaset": name,
                                                                        "collision_count": count})
            raise ReplicaSetCollision(f"ReplicaSet {name} exists with a different template") from None
        logger.info("Created new ReplicaSet", extra={"deployment": d.key, "replicaset": name, "revision": rev,
                                                     "replicas": created.spec.replicas})
        return created

    async def _update_new_replicaset(self, d: Deployment, rs: ReplicaSet, *, rev: int) -> ReplicaSet:
        """Bring a current ReplicaSet's annotations (revision included) and minReadySeconds up to date.

        A revision only ever grows: a ReplicaSet that becomes current again (a rollback)
        gets the next number, one that already is current keeps its own.
        """
        current = rs.metadata.annotations or {}
        wanted = new_replicaset_annotations(d, rev=max(rev, revision(rs)))
        changed = {k: v for k, v in wanted.items() if current.get(k) != v}
        patch: dict[str, Any] = {}
        if changed:
            patch["metadata"] = {"annotations": changed}
        if rs.spec.min_ready_seconds != d.spec.min_ready_seconds:
            patch["spec"] = {"minReadySeconds": d.spec.min_ready_seconds}
        return await self._patch_replicaset(rs, patch) if patch else rs

    async def _patch_replicaset(self, rs: ReplicaSet, patch: dict[str, Any]) -> ReplicaSet:
        """Merge-patch `rs`, conditional on the resourceVersion it was read at (Conflict if stale)."""
        patch = {**patch, "metadata": {**patch.get("metadata", {}), "resourceVersion": rs.metadata.resource_version}}
        return await self.client.patch(ReplicaSet, rs.metadata.name or "", patch, rs.metadata.namespace)

    async def _scale(self, d: Deployment, new_rs: ReplicaSet | None, old: list[ReplicaSet],
                     plan: Plan) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """Apply `plan`; a planned ReplicaSet also gets the current desired/max-replicas annotations."""
        annotations = replicas_annotations(d)

        async def apply(rs: ReplicaSet) -> ReplicaSet:
            want = plan.get(rs.key)
            if want is None:
                return rs
            current = rs.metadata.annotations or {}
            if rs.spec.replicas == want and all(current.get(k) == v for k, v in annotations.items()):
                return rs
            scaled = await self._patch_replicaset(rs, {"metadata": {"annotations": annotations},
                                                       "spec": {"replicas": want}})
            if rs.spec.replicas != want:
                direction = "up" if want > (rs.spec.replicas or 0) else "down"
                logger.info("Scaling ReplicaSet", extra={"deployment": d.key, "replicaset": rs.key,
                                                         "from": rs.spec.replicas, "to": want})
                self.recorder.event(d, EVENT_NORMAL, "ScalingReplicaSet",
                                    f"Scaled {direction} replica set {rs.metadata.name} from "
                                    f"{rs.spec.replicas or 0} to {want}")
            return scaled

        return (await apply(new_rs) if new_rs is not None else None), [await apply(rs) for rs in old]

    async def _cleanup(self, d: Deployment, old: list[ReplicaSet]) -> list[ReplicaSet]:
        """Delete the oldest empty ReplicaSets beyond revisionHistoryLimit; return those kept."""
        limit = d.spec.revision_history_limit
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit
        live = [rs for rs in old if rs.metadata.deletion_timestamp is None]
        excess = len(live) - limit
        if excess <= 0:
            return old
        gone: set[str] = set()
        for rs in sorted(live, key=lambda r: (revision(r), _creation_order(r)))[:excess]:
            if rs.spec.replicas != 0 or rs.status.replicas or \
                    (rs.status.observed_generation or 0) < (rs.metadata.generation or 0):
                continue  # not scaled down yet, or its status does not show it
            try:
                await self.client.delete(ReplicaSet, rs.metadata.name or "", rs.metadata.namespace,
                                         uid=rs.metadata.uid)
            except NotFound:
                pass
            logger.info("Deleted old ReplicaSet", extra={"deployment": d.key, "replicaset": rs.key})
            gone.add(rs.key)
        return [rs for rs in old if rs.key not in gone]

    async def _sync_status(self, d: Deployment, base: DeploymentStatus, *, new_rs: ReplicaSet | None,
                           replicasets: list[ReplicaSet], progress: bool) -> Result | None:
        now = self.now()
        status = calculate_status(d, new_rs=new_rs, replicasets=replicasets, base=base, now=now)
        if progress:
            sync_progress(d, status, old=d.status, new_rs=new_rs, now=now)
        if status.to_dict() != d.status.to_dict():
            d = await self.client.update_status(d.model_copy(update={"status": status}))
            logger.debug("Updated status", extra={"deployment": d.key, "replicas": status.replicas,
                                                  "updated": status.updated_replicas,
                                                  "available": status.available_replicas})
        after = progress_requeue_after(d, status, now=now) if progress else None
        return Result(requeue_after=after) if after is not None else None
