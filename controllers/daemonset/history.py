"""A DaemonSet's history: one ControllerRevision per distinct pod template.

Mirrors constructHistory / snapshot / cleanupHistory of pkg/controller/daemon/update.go and
pkg/controller/history:
- a revision's `data` is `{"spec": {"template": <template>, "$patch": "replace"}}` inside the
  template, the strategic merge patch `kubectl rollout undo` applies to go back to it; the
  revision that matches the DaemonSet's current template is the current one;
- it is named `<ds-name>-<hash>`, where the hash (`controller-revision-hash`, also put on the
  revision's and the pods' labels) is computed from the template and status.collisionCount;
  a name taken by a revision with other data is a collision: collisionCount goes up and the
  next sync tries the next name;
- the current revision always has the highest revision number: when an old template comes
  back (a rollback), its revision is renumbered to max + 1, as upstream does;
- old revisions beyond spec.revisionHistoryLimit that no live pod uses are deleted, oldest first.
"""

from __future__ import annotations

import logging
from typing import Any

from controllers.common.owner import new_controller_ref
from controllers.deployment.util import compute_hash
from kube.api import ControllerRevision, DaemonSet, ObjectMeta
from kube.client import RESTClient
from kube.errors import AlreadyExists, NotFound

__all__ = ["REVISION_HASH_LABEL", "construct_history", "cleanup_history", "revision_data"]

logger = logging.getLogger(__name__)

REVISION_HASH_LABEL = "controller-revision-hash"


class HashCollisionError(Exception):
    """The revision name is taken by another template; collisionCount was raised, sync again."""


def revision_data(ds: DaemonSet) -> dict[str, Any]:
    """getPatch: the patch that restores `ds`'s current template."""
    template = ds.spec.template.to_dict()
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def _max_revision(revisions: list[ControllerRevision]) -> int:
    return max((r.revision for r in revisions), default=0)


async def _snapshot(client: RESTClient, ds: DaemonSet, revision: int) -> ControllerRevision:
    hash_ = compute_hash(ds.spec.template, ds.status.collision_count)
    meta = ds.metadata
    labels = {**(ds.spec.template.metadata.labels or {}), REVISION_HASH_LABEL: hash_}
    candidate = ControllerRevision(metadata=ObjectMeta(name=f"{meta.name}-{hash_}", namespace=meta.namespace,
                                                       labels=labels, annotations=meta.annotations,
                                                       owner_references=[new_controller_ref(ds)]),
                                   data=revision_data(ds), revision=revision)
    try:
        return await client.create(candidate)
    except AlreadyExists:
        existing = await client.get(ControllerRevision, candidate.metadata.name or "", meta.namespace)
        ref = existing.metadata.controller_ref()
        if ref is not None and ref.uid == meta.uid and existing.data == candidate.data:
            return existing
    collisions = (ds.status.collision_count or 0) + 1
    await client.patch(DaemonSet, meta.name or "", {"status": {"collisionCount": collisions}}, meta.namespace,
                       subresource="status")
    raise HashCollisionError(f"hash collision for DaemonSet {ds.key}; collisionCount is now {collisions}")


async def construct_history(client: RESTClient, ds: DaemonSet,
                            revisions: list[ControllerRevision]) -> tuple[ControllerRevision, list[ControllerRevision]]:
    """(current revision, old revisions) after creating or renumbering the current one."""
    data = revision_data(ds)
    current = [r for r in revisions if r.data == data]
    old = [r for r in revisions if r.data != data]
    want = _max_revision(old) + 1
    if not current:
        return await _snapshot(client, ds, want), old
    current.sort(key=lambda r: r.revision)
    cur = current[-1]
    for duplicate in current[:-1]:  # dedupCurHistories: keep the newest
        await _delete(client, duplicate)
    if cur.revision < want:
        renumbered = cur.model_copy(update={"revision": want})
        cur = await client.update(renumbered)
        logger.info("Renumbered revision", extra={"daemonset": ds.key, "revision": want})
    return cur, old


async def _delete(client: RESTClient, revision: ControllerRevision) -> None:
    try:
        await client.delete(ControllerRevision, revision.metadata.name or "", revision.metadata.namespace,
                            uid=revision.metadata.uid)
    except NotFound:
        pass


async def cleanup_history(client: RESTClient, ds: DaemonSet, old: list[ControllerRevision],
                          live_hashes: set[str]) -> None:
    """Delete the oldest unused revisions beyond spec.revisionHistoryLimit."""
    limit = ds.spec.revision_history_limit if ds.spec.revision_history_limit is not None else 10
    unused = sorted((r for r in old if (r.metadata.labels or {}).get(REVISION_HASH_LABEL) not in live_hashes),
                    key=lambda r: r.revision)
    for revision in unused[:max(0, len(old) - limit)]:
        await _delete(client, revision)
