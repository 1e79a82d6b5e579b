"""Which pods a ReplicaSet deletes first when it scales down (ActivePodsWithRanks)."""

from __future__ import annotations

import pytest

from controllers.replicaset.deletion import POD_DELETION_COST_ANNOTATION, deletion_order, pods_to_delete
from kube.api import Pod
from tests.controllers.builders import make_pod

T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"


def names(pods: list[Pod]) -> list[str]:
    return [p.metadata.name or "" for p in pods]


@pytest.mark.parametrize(("first", "second", "why"), [
    (make_pod().name("a").created(T0), make_pod().name("b").node("n1").created(T2), "unscheduled first"),
    (make_pod().name("a").node("n1").phase("Pending").created(T0),
     make_pod().name("b").node("n1").phase("Running").created(T2), "pending before running"),
    (make_pod().name("a").node("n1").phase("Unknown").created(T0),
     make_pod().name("b").node("n1").phase("Running").created(T2), "unknown before running"),
    (make_pod().name("a").node("n1").phase("Running").created(T0),
     make_pod().name("b").node("n1").ready(since=T1).created(T2), "not ready before ready"),
    (make_pod().name("a").node("n1").ready(since=T0).annotation(POD_DELETION_COST_ANNOTATION, "-5").created(T0),
     make_pod().name("b").node("n2").ready(since=T2).created(T2), "lower deletion cost first"),
    (make_pod().name("a").node("n1").ready(since=T2).created(T0),
     make_pod().name("b").node("n2").ready(since=T0).created(T2), "ready for less time first"),
    (make_pod().name("a").node("n1").ready(since=T0).restarts(3).created(T0),
     make_pod().name("b").node("n2").ready(since=T0).restarts(1).created(T2), "more restarts first"),
    (make_pod().name("a").node("n1").ready(since=T0).created(T2),
     make_pod().name("b").node("n2").ready(since=T0).created(T0), "newer first"),
])
def test_pairwise_order(first: object, second: object, why: str) -> None:
    a, b = first.obj(), second.obj()  # type: ignore[attr-defined]
    assert names(deletion_order([b, a])) == ["a", "b"], why
    assert names(deletion_order([a, b])) == ["a", "b"], why


def test_pods_doubled_up_on_a_node_go_before_lone_ones() -> None:
    lone = make_pod().name("lone").node("n1").ready(since=T0).created(T2).obj()
    crowded = [make_pod().name(f"c{i}").node("n2").ready(since=T0).created(T0).obj() for i in range(2)]
    assert names(deletion_order([lone, *crowded]))[:2] == ["c0", "c1"]


def test_pods_to_delete_takes_the_cheapest() -> None:
    pods = [make_pod().name("running").node("n1").ready(since=T0).created(T0).obj(),
            make_pod().name("pending").node("n1").phase("Pending").created(T0).obj(),
            make_pod().name("unscheduled").created(T0).obj()]
    assert names(pods_to_delete(pods, 2)) == ["unscheduled", "pending"]
    assert names(pods_to_delete(pods, 0)) == []
    assert len(pods_to_delete(pods, 10)) == 3
