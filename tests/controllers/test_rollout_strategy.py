"""The rollout strategies step by step: RollingUpdate bounds, Recreate ordering, proportional scaling.

The simulation plays the ReplicaSet controller and the kubelets: a planned scale-down removes
available pods at once, a scale-up adds pods that become available one step later. At every
moment the bounds a user is promised must hold, and the rollout must finish.
"""

from __future__ import annotations

import pytest

from controllers.deployment.annotations import DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION
from controllers.deployment.fenceposts import max_surge, max_unavailable
from controllers.deployment.strategy import (
    is_scaling_event,
    new_replicaset_replicas,
    plan_proportional,
    plan_recreate,
    plan_rolling,
)
from kube.api import Deployment, ReplicaSet
from tests.controllers.builders import make_deployment, make_rs


def apply(plan: dict[str, int], replicasets: list[ReplicaSet]) -> None:
    """What the ReplicaSet controller does with a new spec.replicas: remove pods at once, add unready ones."""
    for rs in replicasets:
        if rs.key in plan:
            rs.spec.replicas = plan[rs.key]
            rs.status.replicas = rs.spec.replicas
            rs.status.available_replicas = min(rs.status.available_replicas or 0, rs.spec.replicas)


def become_available(replicasets: list[ReplicaSet]) -> None:
    for rs in replicasets:
        rs.status.available_replicas = rs.spec.replicas


def roll(d: Deployment, old_size: int) -> tuple[int, int, int]:
    """Roll `d` from a saturated old ReplicaSet to a new one; (steps, min available, max total) seen."""
    want = d.spec.replicas or 0
    old = make_rs().name("old").created("2024-01-01T00:00:00Z").replicas(old_size, available=old_size).obj()
    new = make_rs().name("new").created("2024-01-02T00:00:00Z").replicas(0).obj()
    new.spec.replicas = new_replicaset_replicas(d, None, [old])
    new.status.replicas = new.spec.replicas
    every = [new, old]
    lowest, highest = old_size, old_size + new.spec.replicas
    for step in range(1, 200):
        apply(plan_rolling(d, new, [old]), every)
        lowest = min(lowest, sum(rs.status.available_replicas or 0 for rs in every))
        highest = max(highest, sum(rs.spec.replicas or 0 for rs in every))
        become_available(every)
        if new.spec.replicas == want and old.spec.replicas == 0:
            return step, lowest, highest
    raise AssertionError(f"rollout of {d.spec} did not finish: new={new.spec.replicas} old={old.spec.replicas}")


@pytest.mark.parametrize(("replicas", "surge", "unavailable"), [
    (3, None, None), (10, None, None), (10, 0, 1), (10, 1, 0), (10, "50%", "50%"), (100, "25%", "25%"),
    (5, 0, "100%"), (1, 0, 0), (7, "30%", 0), (4, 10, 0),
])
def test_rolling_update_stays_within_surge_and_unavailable(replicas: int, surge: int | str | None,
                                                           unavailable: int | str | None) -> None:
    d = make_deployment().replicas(replicas).rolling(max_surge=surge, max_unavailable=unavailable).obj()
    _, lowest, highest = roll(d, replicas)
    assert lowest >= replicas - max_unavailable(d)
    assert highest <= replicas + max_surge(d)


def test_max_unavailable_zero_never_drops_an_available_pod_first() -> None:
    d = make_deployment().replicas(4).rolling(max_surge=1, max_unavailable=0).obj()
    steps, lowest, highest = roll(d, 4)
    assert (lowest, highest) == (4, 5)
    assert steps == 8  # one pod at a time: surge one, retire one


def test_first_step_surges_by_max_surge() -> None:
    d = make_deployment().replicas(10).rolling(max_surge="30%", max_unavailable=0).obj()
    old = make_rs().name("old").replicas(10, available=10).obj()
    assert new_replicaset_replicas(d, None, [old]) == 3


def test_unavailable_old_pods_are_removed_before_available_ones() -> None:
    d = make_deployment().replicas(4).rolling(max_surge=0, max_unavailable=1).obj()
    older = make_rs().name("older").created("2024-01-01T00:00:00Z").replicas(2, available=2).obj()
    broken = make_rs().name("broken").created("2024-01-02T00:00:00Z").replicas(2, available=0).obj()
    new = make_rs().name("new").created("2024-01-03T00:00:00Z").replicas(0).obj()
    # 4 pods, floor 3: one pod may go, and it is a broken one (it costs no availability).
    assert plan_rolling(d, new, [older, broken]) == {"default/broken": 1}


def test_new_replicaset_above_spec_is_scaled_down_first() -> None:
    d = make_deployment().replicas(2).obj()
    new = make_rs().name("new").replicas(5, available=5).obj()
    assert plan_rolling(d, new, []) == {"default/new": 2}


def test_recreate_waits_for_every_old_pod() -> None:
    d = make_deployment().replicas(3).recreate().obj()
    old = make_rs().name("old").replicas(3, available=3).obj()
    new = make_rs().name("new").replicas(0).obj()
    assert new_replicaset_replicas(d, None, [old], old_pods_running=True) == 0
    assert plan_recreate(d, new, [old], old_pods_running=True) == {"default/old": 0}
    old.spec.replicas = 0
    assert plan_recreate(d, new, [old], old_pods_running=True) == {}  # still terminating
    assert plan_recreate(d, new, [old], old_pods_running=False) == {"default/new": 3}


def sized(name: str, size: int, *, desired: int, max_replicas: int, created: str) -> ReplicaSet:
    return (make_rs().name(name).created(created).replicas(size, available=size)
            .annotation(DESIRED_REPLICAS_ANNOTATION, str(desired))
            .annotation(MAX_REPLICAS_ANNOTATION, str(max_replicas)).obj())


def test_scaling_mid_rollout_is_spread_proportionally() -> None:
    # 10 replicas, surge 3, mid-rollout at 8 old + 5 new (13 = 10 + 3), then scaled to 20.
    d = make_deployment().replicas(20).rolling(max_surge=3, max_unavailable=2).obj()
    old = sized("old", 8, desired=10, max_replicas=13, created="2024-01-01T00:00:00Z")
    new = sized("new", 5, desired=10, max_replicas=13, created="2024-01-02T00:00:00Z")
    assert is_scaling_event(d, [new, old])
    plan = plan_proportional(d, new, [old])
    assert sum(plan.values()) == 23  # 20 + surge 3
    assert plan == {"default/old": 14, "default/new": 9}  # 8*23/13 = 14.15, 5*23/13 = 8.85


def test_scaling_down_mid_rollout_takes_from_both() -> None:
    d = make_deployment().replicas(5).rolling(max_surge=1, max_unavailable=0).obj()
    old = sized("old", 8, desired=10, max_replicas=11, created="2024-01-01T00:00:00Z")
    new = sized("new", 3, desired=10, max_replicas=11, created="2024-01-02T00:00:00Z")
    plan = plan_proportional(d, new, [old])
    assert sum(plan.values()) == 6 and plan["default/old"] < 8 and plan["default/new"] < 3


def test_a_single_live_replicaset_just_takes_the_new_size() -> None:
    d = make_deployment().replicas(7).obj()
    only = sized("only", 3, desired=3, max_replicas=4, created="2024-01-01T00:00:00Z")
    empty = sized("empty", 0, desired=3, max_replicas=4, created="2024-01-02T00:00:00Z")
    assert plan_proportional(d, only, [empty]) == {"default/only": 7}
    assert not is_scaling_event(make_deployment().replicas(3).obj(), [only, empty])
