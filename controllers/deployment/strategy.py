"""How many replicas each of a Deployment's ReplicaSets should have now: the rollout strategy.

Mirrors pkg/controller/deployment's rolling.go, recreate.go and sync.go's `scale`, one step
at a time exactly as upstream paces them, so every sync moves the rollout by what the
current ReplicaSet statuses allow and no further:

- RollingUpdate: first scale the new ReplicaSet up, keeping the sum of all spec.replicas at
  most spec.replicas + maxSurge; only when it cannot grow, scale old ones down, never below
  spec.replicas - maxUnavailable available pods (old unavailable pods go first, oldest
  ReplicaSets first). With maxUnavailable 0 no available pod is removed before its
  replacement is available.
- Recreate: every old ReplicaSet to 0; the new one scales up only once no old pod is left
  (terminating ones included).
- A scaling event (spec.replicas differs from a live ReplicaSet's desired-replicas
  annotation) while several ReplicaSets are live: the change is spread in proportion to
  their sizes, leftovers to the largest, as upstream's proportional scaling.

Pure functions over the objects as the caches hold them; the controller only applies the plan.
"""

from __future__ import annotations

import math

from controllers.deployment.annotations import DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION
from controllers.deployment.fenceposts import desired_replicas, is_rolling_update, max_surge, max_unavailable
from kube.api import Deployment, ReplicaSet

__all__ = [
    "Plan",
    "is_saturated",
    "is_scaling_event",
    "new_replicaset_replicas",
    "plan_proportional",
    "plan_recreate",
    "plan_rolling",
]

Plan = dict[str, int]
"""spec.replicas wanted for each ReplicaSet, by ReplicaSet key; absent keys stay as they are."""


def _size(rs: ReplicaSet) -> int:
    return rs.spec.replicas or 0


def _available(rs: ReplicaSet) -> int:
    return rs.status.available_replicas or 0


def _age(rs: ReplicaSet) -> tuple[str, str]:
    return rs.metadata.creation_timestamp or "", rs.metadata.name or ""


def _int_annotation(rs: ReplicaSet, key: str) -> int | None:
    try:
        return int((rs.metadata.annotations or {})[key])
    except (KeyError, ValueError):
        return None


def is_scaling_event(d: Deployment, replicasets: list[ReplicaSet]) -> bool:
    """A live ReplicaSet was sized for a different spec.replicas than the Deployment has now."""
    want = desired_replicas(d)
    return any((desired := _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)) is not None and desired != want
               for rs in replicasets if _size(rs) > 0)


def is_saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
    """`rs` is fully scaled for the Deployment and all its pods are available."""
    want = desired_replicas(d)
    return rs is not None and _size(rs) == want and _available(rs) == want \
        and _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION) == want


def new_replicaset_replicas(d: Deployment, new: ReplicaSet | None, old: list[ReplicaSet], *,
                            old_pods_running: bool = False) -> int:
    """spec.replicas for the new ReplicaSet (`None`: about to be created) on the way to spec.replicas."""
    want = desired_replicas(d)
    current = _size(new) if new is not None else 0
    if not is_rolling_update(d):
        return want if not old_pods_running and not any(_size(rs) for rs in old) else current
    total = current + sum(_size(rs) for rs in old)
    ceiling = want + max_surge(d)
    if total >= ceiling:
        return current
    return current + min(ceiling - total, want - current)


def plan_rolling(d: Deployment, new: ReplicaSet, old: list[ReplicaSet]) -> Plan:
    """One RollingUpdate step: scale the new ReplicaSet if it may move, else old ones down."""
    want = desired_replicas(d)
    if _size(new) > want:
        return {new.key: want}
    grown = new_replicaset_replicas(d, new, old)
    if grown != _size(new):
        return {new.key: grown}
    plan: Plan = {}
    if not any(_size(rs) for rs in old):
        return plan
    oldest_first = sorted(old, key=_age)
    min_available = want - max_unavailable(d)
    all_pods = _size(new) + sum(_size(rs) for rs in old)
    new_unavailable = _size(new) - _available(new)
    # Unavailable old pods first: removing them costs no availability.
    budget = all_pods - min_available - new_unavailable
    if budget <= 0:
        return plan
    cleaned = 0
    for rs in oldest_first:
        if cleaned >= budget:
            break
        unhealthy = _size(rs) - _available(rs)
        if _size(rs) == 0 or unhealthy <= 0:
            continue
        cut = min(budget - cleaned, unhealthy)
        plan[rs.key] = _size(rs) - cut
        cleaned += cut
    # Then available ones, down to the availability floor.
    available = _available(new) + sum(_available(rs) for rs in old)
    excess = available - min_available
    removed = 0
    for rs in oldest_first:
        if removed >= excess:
            break
        size = plan.get(rs.key, _size(rs))
        if size == 0:
            continue
        cut = min(size, excess - removed)
        plan[rs.key] = size - cut
        removed += cut
    return plan


def plan_recreate(d: Deployment, new: ReplicaSet, old: list[ReplicaSet], *, old_pods_running: bool) -> Plan:
    """One Recreate step: old ReplicaSets to 0, then (no old pod left) the new one to spec.replicas."""
    if any(_size(rs) for rs in old):
        return {rs.key: 0 for rs in old if _size(rs)}
    if old_pods_running:
        return {}
    return {new.key: desired_replicas(d)}


def _round(x: float) -> int:
    """Go's math.Round: halves away from zero."""
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def _proportion(rs: ReplicaSet, d: Deployment, to_add: int, added: int) -> int:
    """deployment/util GetProportion: this ReplicaSet's share of `to_add`, within what is left."""
    if _size(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    want = desired_replicas(d)
    if want == 0:
        fraction = -_size(rs)
    else:
        annotated = _int_annotation(rs, MAX_REPLICAS_ANNOTATION) or d.status.replicas or _size(rs)
        fraction = _round(_size(rs) * (want + max_surge(d)) / annotated) - _size(rs)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def plan_proportional(d: Deployment, new: ReplicaSet | None, old: list[ReplicaSet]) -> Plan:
    """sync.go `scale`: follow a change of spec.replicas without advancing the rollout."""
    want = desired_replicas(d)
    every = [rs for rs in (new, *old) if rs is not None]
    live = [rs for rs in every if _size(rs) > 0]
    if len(live) <= 1:
        target = live[0] if live else (new or max(old, key=_age, default=None))
        return {target.key: want} if target is not None and _size(target) != want else {}
    if is_saturated(d, new):
        return {rs.key: 0 for rs in old if _size(rs)}
    if not is_rolling_update(d):
        return {}
    allowed = want + max_surge(d) if want > 0 else 0
    to_add = allowed - sum(_size(rs) for rs in live)
    # Growing favours the largest and newest ReplicaSets, shrinking the largest and oldest.
    if to_add > 0:
        order = sorted(sorted(live, key=_age, reverse=True), key=_size, reverse=True)
    else:
        order = sorted(sorted(live, key=_age), key=_size, reverse=True)
    plan: Plan = {}
    added = 0
    for rs in order:
        share = _proportion(rs, d, to_add, added)
        plan[rs.key] = _size(rs) + share
        added += share
    if to_add != added:
        first = order[0].key
        plan[first] = max(0, plan[first] + to_add - added)
    return plan
