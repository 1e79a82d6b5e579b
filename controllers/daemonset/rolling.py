"""RollingUpdate: which old daemon pods to replace now, within maxUnavailable and maxSurge.

Mirrors rollingUpdate of pkg/controller/daemon/update.go. Per node, the pods not being
deleted are split into the one up-to-date pod (its `controller-revision-hash` is the current
revision's) and the one old pod; a node with more than one of either is left to the manage
loop (and counts as unavailable, or as surging). Then:
- maxSurge 0: an old pod that is not available is replaced at once; available old pods are
  replaced while fewer than maxUnavailable nodes are unavailable (nodes whose new pod is not
  yet available, or that have no pod, count as unavailable). Deleting the old pod lets the
  manage loop create the new one;
- maxSurge > 0: a new pod is created beside an old one (at once if the old one is not
  available, otherwise while fewer than maxSurge nodes are surging); once the new pod is
  available the old one is deleted; an old pod on a node that should no longer run it goes.
maxUnavailable and maxSurge are numbers or percentages of desiredNumberScheduled (rounded
up, as upstream's GetScaledValueFromIntOrPercent). Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from controllers.daemonset.history import REVISION_HASH_LABEL
from kube.api import DaemonSet, Pod

__all__ = ["RollingPlan", "is_updated", "plan_rolling_update", "scaled_value", "surge_and_unavailable"]


@dataclass
class RollingPlan:
    delete: list[Pod] = field(default_factory=list)
    create_on: list[str] = field(default_factory=list)


def scaled_value(value: int | str | None, total: int) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        percent = int(value.rstrip("%")) if value.rstrip("%").isdigit() else 0
        return math.ceil(percent * total / 100)
    return value


def surge_and_unavailable(ds: DaemonSet, desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) for `desired` nodes; both 0 only if the spec says so."""
    strategy = ds.spec.update_strategy
    rolling = strategy.rolling_update if strategy else None
    if rolling is None:
        return 0, 1
    surge = scaled_value(rolling.max_surge, desired)
    unavailable = scaled_value(rolling.max_unavailable, desired)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # upstream: "Validation should never allow the user to explicitly use zero values"
    return surge, unavailable


def is_updated(pod: Pod, hash_: str) -> bool:
    return (pod.metadata.labels or {}).get(REVISION_HASH_LABEL) == hash_


def _split(pods: list[Pod], hash_: str) -> tuple[Pod | None, Pod | None, bool]:
    """(new pod, old pod, ok): ok is False when the node holds more than one of either."""
    new: Pod | None = None
    old: Pod | None = None
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        if is_updated(pod, hash_):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


def plan_rolling_update(*, node_to_pods: Mapping[str, list[Pod]], hash_: str, max_surge: int,
                        max_unavailable: int, available: Callable[[Pod], bool],
                        should_run: Callable[[str], bool]) -> RollingPlan:
    """The old pods to delete and the nodes to surge onto in this step (see the module doc)."""
    if max_surge == 0:
        return _without_surge(node_to_pods, hash_, max_unavailable, available)
    plan, surging = RollingPlan(), 0
    for node in sorted(node_to_pods):
        new, old, ok = _split(node_to_pods[node], hash_)
        if not ok:
            surging += 1
            continue
        if old is not None and not should_run(node):
            plan.delete.append(old)
        elif old is None:
            continue
        elif new is None:
            if not available(old):
                plan.create_on.append(node)
            elif surging < max_surge:
                surging += 1
                plan.create_on.append(node)
        elif not available(new):
            surging += 1
        else:
            plan.delete.append(old)
    return plan


def _without_surge(node_to_pods: Mapping[str, list[Pod]], hash_: str, max_unavailable: int,
                   available: Callable[[Pod], bool]) -> RollingPlan:
    unavailable = 0
    replace_now: list[Pod] = []
    candidates: list[Pod] = []
    for node in sorted(node_to_pods):
        new, old, ok = _split(node_to_pods[node], hash_)
        if not ok or (old is None) == (new is None):
            unavailable += 1  # the manage loop creates or deletes here first
        elif new is not None:
            if not available(new):
                unavailable += 1
        elif old is not None and not available(old):
            replace_now.append(old)
        elif unavailable < max_unavailable and old is not None:
            candidates.append(old)
    room = min(max(0, max_unavailable - unavailable), len(candidates))
    return RollingPlan(delete=replace_now + candidates[:room])
