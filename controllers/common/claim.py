"""Claiming dependents: keep what we own and still select, adopt matching orphans, release the rest.

Mirrors pkg/controller.BaseControllerRefManager.ClaimObject. For an owner O with selector S:
- an object controlled by O that S matches is kept; one S no longer matches is released
  (O's reference removed) unless O is being deleted;
- an orphan (no controller at all) that S matches and that is not terminating is adopted
  (O added as its controller) unless O is being deleted, and only after `can_adopt()`
  confirmed with a fresh read that O still exists with the same uid;
- objects controlled by someone else are never touched.
Adopting and releasing are merge patches that carry the object's resourceVersion, so two
owners racing for one orphan cannot both win: the loser gets a Conflict and retries from
a fresher cache. A NotFound (the object went away) is not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from controllers.common.owner import new_controller_ref
from kube.api import KubeObject
from kube.api.base import T_Object
from kube.client import RESTClient
from kube.errors import NotFound
from kube.selectors import LabelSelector

__all__ = ["ClaimActions", "claim_objects"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClaimActions:
    """How to reach the API for one owner: the client that writes and the adoption recheck."""

    client: RESTClient
    can_adopt: Callable[[], Awaitable[bool]]


def _refs_patch(obj: KubeObject, refs: list[dict[str, Any]]) -> dict[str, Any]:
    meta = obj.metadata
    return {"metadata": {"resourceVersion": meta.resource_version, "ownerReferences": refs or None}}


async def _adopt(actions: ClaimActions, owner: KubeObject, obj: T_Object) -> T_Object | None:
    meta = obj.metadata
    refs = [r.to_dict() for r in meta.owner_references or []] + [new_controller_ref(owner).to_dict()]
    try:
        adopted = await actions.client.patch(type(obj), meta.name or "", _refs_patch(obj, refs), meta.namespace)
    except NotFound:
        return None
    logger.info("Adopted orphan", extra={"owner": owner.key, "kind": obj.info.kind, "object": obj.key})
    return adopted


async def _release(actions: ClaimActions, owner: KubeObject, obj: T_Object) -> None:
    meta = obj.metadata
    uid = owner.metadata.uid
    refs = [r.to_dict() for r in meta.owner_references or [] if r.uid != uid]
    try:
        await actions.client.patch(type(obj), meta.name or "", _refs_patch(obj, refs), meta.namespace)
    except NotFound:
        return
    logger.info("Released dependent", extra={"owner": owner.key, "kind": obj.info.kind, "object": obj.key})


async def claim_objects(*, owner: KubeObject, selector: LabelSelector, owned: list[T_Object],
                        orphans: list[T_Object], actions: ClaimActions) -> list[T_Object]:
    """The objects `owner` manages after claiming; raises the first API error (Conflict included).

    `owned` are the objects whose controller uid is the owner's, `orphans` those with no
    controller in the owner's namespace (both straight from informer indexes).
    """
    deleting = owner.metadata.deletion_timestamp is not None
    claimed: list[T_Object] = []
    for obj in owned:
        if selector.matches(obj.metadata.labels):
            claimed.append(obj)
        elif not deleting:
            await _release(actions, owner, obj)
    candidates = [o for o in orphans if o.metadata.deletion_timestamp is None
                  and selector.matches(o.metadata.labels)]
    if candidates and not deleting and await actions.can_adopt():
        for obj in candidates:
            adopted = await _adopt(actions, owner, obj)
            if adopted is not None:
                claimed.append(adopted)
    return claimed
