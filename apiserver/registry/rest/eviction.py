"""pods/eviction: delete a pod unless that would break its PodDisruptionBudget.

Mirrors pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create):
1. a pod that is Pending, finished, or already terminating has no budget to respect: it is
   deleted at once (a running one conditional on the resourceVersion just read, so it cannot
   become ready in between unnoticed); conflicts are retried unless the caller set a
   resourceVersion precondition of its own;
2. otherwise its covering budgets are found (see `disruption_budget`): more than one is a
   500 ("This pod has more than one PodDisruptionBudget, which the eviction subresource
   does not support."); none: the pod is deleted;
3. an unready pod while the budget is met costs nothing: it is deleted conditional on its
   resourceVersion (a conflict there means it may have become ready: 429, retry);
4. otherwise one disruption is spent on the budget's status (retried on conflicts with a
   fresh read, 429 when none is left), then the pod is deleted.
Success answers `Status{status: Success}` with 201.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from apiserver.registry.generic import DeleteOptions, RegistryStore
from apiserver.registry.rest._status import success
from apiserver.registry.rest.disruption_budget import covering_budgets, spend_disruption, too_many_requests
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import ApiError, BadRequest, Conflict, Timeout

__all__ = ["EvictionStorage"]

EVICTION_RETRIES = 20
"""Attempts on conflicting writes (upstream EvictionsRetry: 20 steps 500ms apart)."""
RETRY_INTERVAL = 0.5

_MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def _phase(pod: Obj) -> str | None:
    phase = (pod.get("status") or {}).get("phase")
    return phase if isinstance(phase, str) else None


def _terminating(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _can_ignore_budget(pod: Obj) -> bool:
    return _phase(pod) in ("Succeeded", "Failed", "Pending") or _terminating(pod)


def _should_enforce_resource_version(pod: Obj) -> bool:
    return _phase(pod) not in ("Succeeded", "Failed") and not _terminating(pod)


def _is_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [] if isinstance(c, dict))


class EvictionStorage:
    kind = Kind("policy", "v1", "Eviction")

    def __init__(self, pods: RegistryStore, pdbs: RegistryStore | None = None) -> None:
        self.pods = pods
        self.pdbs = pdbs

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        if name is None:
            raise BadRequest("an eviction names its pod")
        evicted = (obj.get("metadata") or {}).get("name")
        if evicted and evicted != name:
            raise BadRequest("name in URL does not match name in Eviction object")
        opts = obj.get("deleteOptions") or {}
        if not isinstance(opts, dict):
            raise BadRequest("deleteOptions must be an object")
        pre = opts.get("preconditions") or {}
        options = DeleteOptions(
            grace_period_seconds=opts.get("gracePeriodSeconds"), propagation_policy=opts.get("propagationPolicy"),
            precondition_uid=pre.get("uid"), precondition_resource_version=pre.get("resourceVersion"),
            dry_run=ctx.dry_run or bool(opts.get("dryRun")))
        pod = await self._delete_if_budget_ignorable(ctx, name, options)
        if pod is None:
            return success()
        budget = await self._respect_budget(pod, options)
        conditional = budget is not None
        deletion = options
        if conditional and options.precondition_resource_version is None:
            deletion = _with_resource_version(options, pod)
        try:
            await self.pods.delete(ctx.namespace, name, deletion, admission=ctx.admission)
        except Conflict:
            if conditional and options.precondition_resource_version is None:
                raise too_many_requests(f"The disruption budget {budget} is still being processed "
                                        "by the server.", retry_after=10) from None
            raise
        return success()

    async def _delete_if_budget_ignorable(self, ctx: Context, name: str, options: DeleteOptions) -> Obj | None:
        """Delete the pod when no budget applies to it; else return it as read."""
        retry = options.precondition_resource_version is None
        for attempt in range(EVICTION_RETRIES):
            pod = await self.pods.get(ctx.namespace, name)
            if not _can_ignore_budget(pod):
                return pod
            deletion = options
            if _should_enforce_resource_version(pod) and options.precondition_resource_version is None:
                deletion = _with_resource_version(options, pod)
            try:
                await self.pods.delete(ctx.namespace, name, deletion, admission=ctx.admission)
                return None
            except Conflict:
                if not retry or attempt == EVICTION_RETRIES - 1:
                    raise
                await asyncio.sleep(RETRY_INTERVAL)
        raise AssertionError("the loop returns or raises")

    async def _respect_budget(self, pod: Obj, options: DeleteOptions) -> str | None:
        """Spend a disruption of the pod's budget; the budget's name when the deletion must be conditional."""
        if self.pdbs is None:
            return None
        budgets = await covering_budgets(self.pdbs, pod)
        if len(budgets) > 1:
            raise ApiError(_MORE_THAN_ONE, reason="", code=500)
        if not budgets:
            return None
        pdb = budgets[0]
        meta, status = pdb.get("metadata") or {}, pdb.get("status") or {}
        budget = str(meta.get("name"))
        desired, current = int(status.get("desiredHealthy") or 0), int(status.get("currentHealthy") or 0)
        if not _is_ready(pod) and current >= desired and desired > 0:
            return budget
        pod_name = str((pod.get("metadata") or {}).get("name"))
        for attempt in range(EVICTION_RETRIES):
            try:
                await spend_disruption(self.pdbs, pdb, pod_name, dry_run=options.dry_run)
                return None
            except Conflict:
                if attempt == EVICTION_RETRIES - 1:
                    break
                await asyncio.sleep(RETRY_INTERVAL)
                pdb = await self.pdbs.get(meta.get("namespace"), budget)
        raise Timeout(f'couldn\'t update PodDisruptionBudget "{budget}" due to conflicts',
                      details={"retryAfterSeconds": 10})


def _with_resource_version(options: DeleteOptions, pod: Obj) -> DeleteOptions:
    rv: Any = (pod.get("metadata") or {}).get("resourceVersion")
    return replace(options, precondition_resource_version=str(rv) if rv is not None else None)
