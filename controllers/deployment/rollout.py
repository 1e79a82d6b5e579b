"""How many replicas each of a Deployment's ReplicaSets should have: the rollout strategy.

Mirrors the shape of pkg/controller/deployment (rolling.go, recreate.go, util's
ResolveFenceposts). The current strategy is the simplest correct one: the new ReplicaSet
(whose template equals the Deployment's) gets spec.replicas and every older one gets 0, in
one step. RollingUpdate's maxSurge/maxUnavailable pacing belongs in `plan_rollout` (it
will need ReplicaSet status, which is why the whole objects are passed), Recreate's "old
pods gone first" likewise; the controller only applies the plan. `max_surge` and
`max_unavailable` are already resolved as upstream does, for the Available condition and
the max-replicas annotation. Pure functions.
"""

from __future__ import annotations

import math

from kube.api import Deployment, ReplicaSet

__all__ = [
    "desired_replicas",
    "is_rolling_update",
    "max_surge",
    "max_unavailable",
    "new_replicaset_replicas",
    "plan_rollout",
    "resolve_fenceposts",
    "scaled_value",
]

DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"


def desired_replicas(d: Deployment) -> int:
    return d.spec.replicas if d.spec.replicas is not None else 1


def is_rolling_update(d: Deployment) -> bool:
    strategy = d.spec.strategy
    return strategy is None or strategy.type in (None, "RollingUpdate")


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, "25%" of `total` rounded as asked."""
    if isinstance(value, int):
        return value
    text = value.strip()
    if not text.endswith("%"):
        return int(text)
    exact = int(text[:-1]) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def resolve_fenceposts(d: Deployment) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) for spec.replicas; never both 0 (unavailable becomes 1)."""
    rolling = d.spec.strategy.rolling_update if d.spec.strategy else None
    surge_spec = rolling.max_surge if rolling and rolling.max_surge is not None else DEFAULT_MAX_SURGE
    unavailable_spec = (rolling.max_unavailable if rolling and rolling.max_unavailable is not None
                        else DEFAULT_MAX_UNAVAILABLE)
    total = desired_replicas(d)
    surge = scaled_value(surge_spec, total, round_up=True)
    unavailable = scaled_value(unavailable_spec, total, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Deployment) -> int:
    return resolve_fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: Deployment) -> int:
    total = desired_replicas(d)
    if not is_rolling_update(d) or total == 0:
        return 0
    return min(resolve_fenceposts(d)[1], total)


def new_replicaset_replicas(d: Deployment, old: list[ReplicaSet]) -> int:
    """spec.replicas for a ReplicaSet about to be created for the Deployment's template."""
    return desired_replicas(d)


def plan_rollout(d: Deployment, new: ReplicaSet, old: list[ReplicaSet]) -> dict[str, int]:
    """The spec.replicas every ReplicaSet of `d` should have now, by ReplicaSet key."""
    plan = {rs.key: 0 for rs in old}
    plan[new.key] = desired_replicas(d)
    return plan
