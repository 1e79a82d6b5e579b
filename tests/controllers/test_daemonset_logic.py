"""Pure DaemonSet logic, table-driven: node eligibility and the rolling-update step."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.daemonset.placement import Placement, node_should_run_daemon_pod, pin_to_node, target_node_name
from controllers.daemonset.rolling import plan_rolling_update, scaled_value
from kube.api import Node, Pod, PodSpec


def node(name: str = "n1", *, labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None) -> Node:
    return Node.model_validate({"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}})


def spec(**fields: Any) -> PodSpec:
    return PodSpec.model_validate({"containers": [{"name": "c", "image": "i"}], **fields})


AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}


@pytest.mark.parametrize(("pod_spec", "the_node", "expected"), [
    (spec(), node(), Placement(True, True)),
    (spec(nodeSelector={"disk": "ssd"}), node(labels={"disk": "ssd"}), Placement(True, True)),
    (spec(nodeSelector={"disk": "ssd"}), node(labels={"disk": "hdd"}), Placement(False, False)),
    (spec(affinity=AFFINITY), node(labels={"zone": "a"}), Placement(True, True)),
    (spec(affinity=AFFINITY), node(labels={"zone": "b"}), Placement(False, False)),
    (spec(nodeName="n2"), node(), Placement(False, False)),
    (spec(), node(taints=[{"key": "k", "effect": "NoSchedule"}]), Placement(False, True)),
    (spec(), node(taints=[{"key": "k", "effect": "NoExecute"}]), Placement(False, False)),
    (spec(), node(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), Placement(True, True)),
    (spec(tolerations=[{"key": "k", "operator": "Exists"}]), node(taints=[{"key": "k", "effect": "NoExecute"}]),
     Placement(True, True)),
    # The daemon tolerations: a not-ready, unschedulable or memory-pressured node still runs daemons.
    (spec(), node(taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                          {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                          {"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}]),
     Placement(True, True)),
    (spec(), node(taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
     Placement(False, True)),
    (spec(hostNetwork=True), node(taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
     Placement(True, True)),
])
def test_node_should_run_daemon_pod(pod_spec: PodSpec, the_node: Node, expected: Placement) -> None:
    assert node_should_run_daemon_pod(pod_spec, the_node) == expected


def test_pin_replaces_required_terms_and_keeps_preferred() -> None:
    affinity = {"nodeAffinity": {**AFFINITY["nodeAffinity"], "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]}}
    pod_spec = spec(affinity=affinity)
    pin_to_node(pod_spec, "n7")
    node_affinity = pod_spec.to_dict()["affinity"]["nodeAffinity"]
    assert node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]}
    assert len(node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]) == 1
    assert target_node_name(Pod(spec=pod_spec)) == "n7"


def pod(name: str, hash_: str, *, ready: bool = True) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "labels": {"controller-revision-hash": hash_},
                                            "annotations": {"ready": str(ready)}},
                               "spec": {"containers": []}})


def ready(p: Pod) -> bool:
    return (p.metadata.annotations or {}).get("ready") == "True"


def plan(node_to_pods: dict[str, list[Pod]], *, surge: int = 0, unavailable: int = 1) -> tuple[list[str], list[str]]:
    result = plan_rolling_update(node_to_pods=node_to_pods, hash_="new", max_surge=surge,
                                 max_unavailable=unavailable, available=ready, should_run=lambda n: True)
    return sorted(p.metadata.name or "" for p in result.delete), sorted(result.create_on)


def test_rolling_without_surge_respects_max_unavailable() -> None:
    all_old = {f"n{i}": [pod(f"p{i}", "old")] for i in range(4)}
    assert plan(all_old) == (["p0"], [])
    assert plan(all_old, unavailable=2) == (["p0", "p1"], [])
    # One node is already replacing (its new pod is not available yet): nothing more goes.
    busy = {**all_old, "n0": [pod("q0", "new", ready=False)]}
    assert plan(busy) == ([], [])
    # An old pod that is not available anyway is replaced at once, whatever the budget.
    broken = {**busy, "n3": [pod("p3", "old", ready=False)]}
    assert plan(broken) == (["p3"], [])


def test_rolling_with_surge_creates_first_then_deletes_old() -> None:
    all_old = {f"n{i}": [pod(f"p{i}", "old")] for i in range(3)}
    assert plan(all_old, surge=1, unavailable=0) == ([], ["n0"])
    surging = {**all_old, "n0": [pod("p0", "old"), pod("q0", "new", ready=False)]}
    assert plan(surging, surge=1, unavailable=0) == ([], [])
    surged = {**all_old, "n0": [pod("p0", "old"), pod("q0", "new")]}
    assert plan(surged, surge=1, unavailable=0) == (["p0"], ["n1"])


@pytest.mark.parametrize(("value", "total", "expected"), [(1, 10, 1), ("10%", 10, 1), ("15%", 10, 2), ("0%", 5, 0),
                                                          (None, 3, 0)])
def test_scaled_value_rounds_up(value: int | str | None, total: int, expected: int) -> None:
    assert scaled_value(value, total) == expected
