"""The StatefulSet controller: pods with stable identities, created, deleted and updated in order.

Mirrors pkg/controller/statefulset. Informers on StatefulSets, Pods and ControllerRevisions;
pods and revisions are indexed by the uid of their controller. `reconcile` is level-triggered
and idempotent; each run takes one step of `plan.plan_sync` and the next pod event runs it
again:
1. read the set from the cache (gone or being deleted: the garbage collector removes its
   pods and revisions);
2. claim its pods: those it controls and still selects, plus orphans it selects whose name is
   NAME-ORDINAL;
3. find or create the update revision (a ControllerRevision of the current template; a
   name taken by different data bumps status.collisionCount) and the current revision;
4. create or delete pods as the plan says (a pod's volumeClaimTemplates claims first, see
   `claims`). Names are fixed (NAME-ORDINAL), so a create the cache has not caught up with
   fails with AlreadyExists instead of making a second pod: no expectations are needed;
5. drop revisions beyond revisionHistoryLimit that no pod uses, and write status through
   `/status` when it changed.
"""

from __future__ import annotations

import asyncio
import logging

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
from controllers.context import ControllerContext
from controllers.statefulset.claims import claim_names, new_claims, pod_owner_patch, with_claim_volumes
from controllers.statefulset.identity import new_pod, ordinal_of, pod_revision, split_by_ordinal, start_ordinal
from controllers.statefulset.plan import plan_sync, uses_update_revision
from controllers.statefulset.revisions import new_revision, template_of
from controllers.statefulset.status import compute_status
from kube.api import PersistentVolumeClaim, Pod, StatefulSet
from kube.api.apps_v1_daemonset import ControllerRevision
from kube.cache import EventHandler
from kube.controller import Request, Result, TerminalError, run_workers
from kube.errors import AlreadyExists, ApiError, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.selectors import LabelSelector
from kube.workqueue import WorkQueue

__all__ = ["StatefulSetController"]

logger = logging.getLogger(__name__)


class StatefulSetController:
    name = "statefulset"

    def __init__(self, ctx: ControllerContext) -> None:
        self.client = ctx.client
        self.recorder = EventRecorder(ctx.client, component="statefulset-controller", clock=ctx.clock)
        self.now = ctx.now
        self.workers = ctx.config.concurrent_statefulset_syncs
        self.queue: WorkQueue[str] = WorkQueue(name=self.name, clock=ctx.clock)
        self.sts_informer = ctx.informers.informer_for(StatefulSet)
        self.pod_informer = ctx.informers.informer_for(Pod)
        self.rev_informer = ctx.informers.informer_for(ControllerRevision)
        self.claim_informer = ctx.informers.informer_for(PersistentVolumeClaim)
        self.pod_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index,
                                        ORPHAN_NAMESPACE_INDEX: orphan_namespace_index})
        self.rev_informer.add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
        self.sts_informer.add_event_handler(EventHandler(
            on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new), on_delete=self._enqueue))
        self.pod_informer.add_event_handler(EventHandler(
            on_add=self._on_pod, on_update=self._on_pod_update, on_delete=self._on_pod))

    async def run(self) -> None:
        logger.info("Starting controller", extra={"controller": self.name, "workers": self.workers})
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self.recorder.run())
                tg.create_task(run_workers(self.name, self.queue, self.reconcile, self.workers, kind="StatefulSet"))
        finally:
            await self.queue.shut_down()

    # --- event handlers ----------------------------------------------------------------------
    def _enqueue(self, sts: StatefulSet) -> None:
        self.queue.add(sts.key)

    def _on_pod(self, pod: Pod) -> None:
        ref = pod.metadata.controller_ref()
        if ref is None:
            for sts in self.sts_informer.store.by_index("namespace", pod.metadata.namespace or ""):
                selector = selector_of(sts.spec.selector)
                if selector is not None and selector.matches(pod.metadata.labels):
                    self.queue.add(sts.key)
            return
        owner = resolve_controller_ref(self.sts_informer.store, pod.metadata.namespace, ref, "StatefulSet")
        if owner is not None:
            self.queue.add(owner.key)

    def _on_pod_update(self, old: Pod, cur: Pod) -> None:
        if old.metadata.resource_version == cur.metadata.resource_version:
            return
        old_ref, cur_ref = old.metadata.controller_ref(), cur.metadata.controller_ref()
        if old_ref is not None and (cur_ref is None or old_ref.uid != cur_ref.uid):
            self._on_pod(old)
        self._on_pod(cur)

    # --- reconcile ---------------------------------------------------------------------------
    async def reconcile(self, req: Request) -> Result | None:
        sts = self.sts_informer.store.get_by_name(req.namespace, req.name)
        if sts is None or sts.metadata.deletion_timestamp is not None:
            return None
        selector = selector_of(sts.spec.selector)
        if selector is None:
            raise TerminalError(f"StatefulSet {req.key} has an empty or invalid selector")
        pods = await self._claim_pods(sts, selector)
        revisions = list(self.rev_informer.store.by_index(CONTROLLER_UID_INDEX, sts.metadata.uid or ""))
        current, update, collisions = await self._revisions(sts, revisions)
        start = start_ordinal(sts)
        replicas, condemned = split_by_ordinal(sts, pods)
        plan = plan_sync(sts, replicas, condemned, start=start, update_revision=update.metadata.name or "",
                         revision_of={p.metadata.name or "": pod_revision(p) for p in pods}, now=self.now())
        error: Exception | None = None
        try:
            for ordinal in plan.create:
                chosen = update if uses_update_revision(sts, ordinal, start) else current
                await self._create_pod(sts, ordinal, chosen)
            scaled_away = {p.metadata.name for p in condemned}
            for pod in plan.delete:
                if pod.metadata.name in scaled_away:
                    await self._hand_claims_to(sts, pod)
                await self._delete_pod(sts, pod)
            await self._truncate_history(sts, revisions, pods, keep={current.metadata.name, update.metadata.name})
        except Exception as e:  # noqa: BLE001 - status is still written; re-raised below
            error = e
        status = compute_status(sts, pods, current=current.metadata.name or "", update=update.metadata.name or "",
                                collision_count=collisions, now=self.now())
        if status.to_dict() != sts.status.to_dict():
            await self.client.update_status(sts.model_copy(update={"status": status}))
        if error is not None:
            raise error
        min_ready = sts.spec.min_ready_seconds or 0
        if min_ready > 0 and status.ready_replicas != status.available_replicas:
            return Result(requeue_after=float(min_ready))  # nothing else wakes us when a pod becomes available
        return None

    async def _claim_pods(self, sts: StatefulSet, selector: LabelSelector) -> list[Pod]:
        store, name = self.pod_informer.store, sts.metadata.name or ""
        owned = list(store.by_index(CONTROLLER_UID_INDEX, sts.metadata.uid or ""))
        orphans = [p for p in store.by_index(ORPHAN_NAMESPACE_INDEX, sts.metadata.namespace or "")
                   if ordinal_of(name, p) is not None and p.metadata.deletion_timestamp is None]

        async def can_adopt() -> bool:
            try:
                fresh = await self.client.get(StatefulSet, name, sts.metadata.namespace)
            except NotFound:
                return False
            return fresh.metadata.uid == sts.metadata.uid and fresh.metadata.deletion_timestamp is None

        return await claim_objects(owner=sts, selector=selector, owned=owned, orphans=orphans,
                                   actions=ClaimActions(client=self.client, can_adopt=can_adopt))

    async def _revisions(self, sts: StatefulSet, revisions: list[ControllerRevision]
                         ) -> tuple[ControllerRevision, ControllerRevision, int]:
        """(current, update, collisionCount), creating or renumbering the update revision."""
        collisions = sts.status.collision_count or 0
        newest = max((r.revision for r in revisions), default=0)
        candidate = new_revision(sts, newest + 1, collisions)
        equal = sorted((r for r in revisions if r.data == candidate.data), key=lambda r: r.revision)
        if equal:
            update = equal[-1]
            if update.revision < newest:  # a rollback: the old template becomes the newest revision
                update = await self.client.patch(ControllerRevision, update.metadata.name or "",
                                                 {"revision": newest + 1}, sts.metadata.namespace)
        else:
            try:
                update = await self.client.create(candidate)
            except AlreadyExists:
                existing = await self.client.get(ControllerRevision, candidate.metadata.name or "",
                                                 sts.metadata.namespace)
                if existing.data != candidate.data:
                    # Another template hashed to this name: the next try hashes with a new count.
                    await self.client.update_status(sts.model_copy(update={"status": sts.status.model_copy(
                        update={"collision_count": collisions + 1})}))
                    raise
                update = existing
            revisions = [*revisions, update]
        current = next((r for r in revisions if r.metadata.name == sts.status.current_revision), update)
        return current, update, collisions

    async def _create_pod(self, sts: StatefulSet, ordinal: int, revision: ControllerRevision) -> None:
        pod = new_pod(sts, template_of(revision, sts.spec.template), ordinal, revision.metadata.name or "")
        pod = with_claim_volumes(pod, sts, ordinal)
        await self._create_claims(sts, pod, ordinal)
        try:
            await self.client.create(pod)
        except AlreadyExists:
            return  # the cache lags our own create
        except ApiError as e:
            self.recorder.event(sts, EVENT_WARNING, "FailedCreate",
                                f"create Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} failed "
                                f"error: {e.message}")
            raise
        self.recorder.event(sts, EVENT_NORMAL, "SuccessfulCreate",
                            f"create Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} successful")

    async def _create_claims(self, sts: StatefulSet, pod: Pod, ordinal: int) -> None:
        """Create the pod's missing claims first; raises (the pod is not created) when one cannot be."""
        for claim in new_claims(sts, ordinal):
            name = claim.metadata.name or ""
            existing = self.claim_informer.store.get_by_name(claim.metadata.namespace, name)
            if existing is not None:
                if existing.metadata.deletion_timestamp is not None:
                    raise RuntimeError(f"pvc {name} is being deleted")
                continue
            try:
                await self.client.create(claim)
            except AlreadyExists:
                continue
            except ApiError as e:
                self.recorder.event(sts, EVENT_WARNING, "FailedCreate",
                                    f"create Claim {name} for Pod {pod.metadata.name} in StatefulSet "
                                    f"{sts.metadata.name} failed error: {e.message}")
                raise
            self.recorder.event(sts, EVENT_NORMAL, "SuccessfulCreate",
                                f"create Claim {name} Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} "
                                "success")

    async def _hand_claims_to(self, sts: StatefulSet, pod: Pod) -> None:
        """With whenScaled Delete: the pod a scale-down removes owns its claims, so they go with it."""
        policy = sts.spec.persistent_volume_claim_retention_policy
        ordinal = ordinal_of(sts.metadata.name or "", pod)
        if policy is None or policy.when_scaled != "Delete" or ordinal is None:
            return
        for name in claim_names(sts, ordinal):
            claim = self.claim_informer.store.get_by_name(pod.metadata.namespace, name)
            patch = pod_owner_patch(claim, pod) if claim is not None else None
            if patch is not None:
                await self.client.patch(PersistentVolumeClaim, name, patch, pod.metadata.namespace)

    async def _delete_pod(self, sts: StatefulSet, pod: Pod) -> None:
        try:
            await self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace, uid=pod.metadata.uid)
        except NotFound:
            return
        self.recorder.event(sts, EVENT_NORMAL, "SuccessfulDelete",
                            f"delete Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} successful")

    async def _truncate_history(self, sts: StatefulSet, revisions: list[ControllerRevision], pods: list[Pod],
                                keep: set[str | None]) -> None:
        live = keep | {pod_revision(p) for p in pods}
        history = sorted((r for r in revisions if r.metadata.name not in live), key=lambda r: r.revision)
        limit = sts.spec.revision_history_limit if sts.spec.revision_history_limit is not None else 10
        for revision in history[:max(0, len(history) - limit)]:
            try:
                await self.client.delete(ControllerRevision, revision.metadata.name or "", sts.metadata.namespace)
            except NotFound:
                pass
