"""A Deployment's rollout bounds: desired replicas, maxSurge and maxUnavailable, resolved.

Mirrors deployment/util's ResolveFenceposts, MaxSurge and MaxUnavailable: numbers are taken
as they are, percentages of spec.replicas round up for maxSurge and down for
maxUnavailable, both 0 becomes maxUnavailable 1, maxUnavailable never exceeds spec.replicas,
and Recreate has neither. Pure functions; `strategy` plans with them.
"""

from __future__ import annotations

import math

from kube.api import Deployment

__all__ = [
    "desired_replicas",
    "is_rolling_update",
    "max_surge",
    "max_unavailable",
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
