"""The placement plugins, table-driven: affinity, taints, ports, topology spread, scores, preemption."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kube.api import Node, Pod
from scheduler.cache import NodeInfo, PodInfo
from scheduler.framework import CycleState, FilterPlugin, FitError, Framework, Profile
from scheduler.framework.images import normalized_image_name
from scheduler.framework.interfaces import Code
from scheduler.plugins import DEFAULT_PLUGINS, DEFAULT_SCORE_WEIGHTS, IN_TREE_REGISTRY
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.image_locality import ImageLocality
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.schedule_one import SchedulingAlgorithm
from tests.scheduler.builders import make_node, make_pod


def info(node: Node, *pods: Pod) -> NodeInfo:
    i = NodeInfo()
    i.set_node(node)
    for p in pods:
        spec = p.spec.model_copy(update={"node_name": node.metadata.name})
        i.add_pod(PodInfo.of(p.model_copy(update={"spec": spec})))
    return i


def verdicts(plugin: FilterPlugin, pod: Pod, nodes: list[NodeInfo]) -> dict[str, str]:
    """node -> "ok" or the rejection reason, with PreFilter run over all nodes first."""
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        status = plugin.pre_filter(state, pod, nodes)
        if status is not None and status.code is Code.SKIP:
            return {n.name: "ok" for n in nodes}
    out: dict[str, str] = {}
    for n in nodes:
        verdict = plugin.filter(state, pod, n)
        out[n.name] = "ok" if verdict is None else verdict.message
    return out


@dataclass
class Case:
    pod: Pod
    nodes: list[NodeInfo]
    want: dict[str, str]


ZONE_A = make_node().name("a").label("zone", "z1").label("disk", "ssd").label("gen", "5").obj()
ZONE_B = make_node().name("b").label("zone", "z2").label("gen", "3").obj()
NO_ZONE = make_node().name("c").obj()
MISMATCH = "node(s) didn't match Pod's node affinity/selector"


@pytest.mark.parametrize("case", [
    Case(make_pod().node_selector(disk="ssd").obj(), [info(ZONE_A), info(ZONE_B)], {"a": "ok", "b": MISMATCH}),
    Case(make_pod().node_affinity_in("zone", "z2").obj(), [info(ZONE_A), info(ZONE_B)], {"a": MISMATCH, "b": "ok"}),
    Case(make_pod().node_affinity_in("zone", "z2", operator="NotIn").obj(), [info(ZONE_A), info(ZONE_B), info(NO_ZONE)],
         {"a": "ok", "b": MISMATCH, "c": "ok"}),
    Case(make_pod().node_affinity_in("disk", operator="Exists").obj(), [info(ZONE_A), info(ZONE_B)],
         {"a": "ok", "b": MISMATCH}),
    Case(make_pod().node_affinity_in("disk", operator="DoesNotExist").obj(), [info(ZONE_A), info(ZONE_B)],
         {"a": MISMATCH, "b": "ok"}),
    Case(make_pod().node_affinity_in("gen", "4", operator="Gt").obj(), [info(ZONE_A), info(ZONE_B), info(NO_ZONE)],
         {"a": "ok", "b": MISMATCH, "c": MISMATCH}),
    Case(make_pod().node_affinity_in("gen", "4", operator="Lt").obj(), [info(ZONE_A), info(ZONE_B)],
         {"a": MISMATCH, "b": "ok"}),
    # terms are ORed
    Case(make_pod().node_affinity_in("zone", "z1").node_affinity_in("zone", "z2").obj(),
         [info(ZONE_A), info(ZONE_B), info(NO_ZONE)], {"a": "ok", "b": "ok", "c": MISMATCH}),
    # nodeSelector and affinity must both hold
    Case(make_pod().node_selector(disk="ssd").node_affinity_in("zone", "z2").obj(), [info(ZONE_A), info(ZONE_B)],
         {"a": MISMATCH, "b": MISMATCH}),
], ids=["selector", "in", "notin", "exists", "doesnotexist", "gt", "lt", "or", "and"])
def test_node_affinity_filter(case: Case) -> None:
    assert verdicts(NodeAffinity(), case.pod, case.nodes) == case.want


def test_node_affinity_prefers_heavier_terms() -> None:
    pod = make_pod().preferred_node(10, "zone", "z1").preferred_node(50, "zone", "z2").obj()
    plugin, state = NodeAffinity(), CycleState()
    scores = {n.name: plugin.score(state, pod, n) for n in (info(ZONE_A), info(ZONE_B), info(NO_ZONE))}
    plugin.normalize_scores(state, pod, scores)
    assert scores == {"a": 20, "b": 100, "c": 0}


TAINTED = make_node().name("t").taint("dedicated", "infra").obj()
EXECUTE = make_node().name("x").taint("gpu", effect="NoExecute").obj()
PREFER = make_node().name("p").taint("spot", effect="PreferNoSchedule").obj()
CLEAN = make_node().name("c").obj()
UNTOLERATED = "node(s) had untolerated taint {dedicated: infra}"


@pytest.mark.parametrize("case", [
    Case(make_pod().obj(), [info(TAINTED), info(EXECUTE), info(PREFER), info(CLEAN)],
         {"t": UNTOLERATED, "x": "node(s) had untolerated taint {gpu: }", "p": "ok", "c": "ok"}),
    Case(make_pod().toleration("dedicated").obj(), [info(TAINTED)], {"t": "ok"}),
    Case(make_pod().toleration("dedicated", operator="Equal", value="infra").obj(), [info(TAINTED)], {"t": "ok"}),
    Case(make_pod().toleration("dedicated", operator="Equal", value="other").obj(), [info(TAINTED)],
         {"t": UNTOLERATED}),
    Case(make_pod().toleration("dedicated", effect="NoExecute").obj(), [info(TAINTED)], {"t": UNTOLERATED}),
    Case(make_pod().toleration("gpu", effect="NoExecute").obj(), [info(EXECUTE)], {"x": "ok"}),
], ids=["none", "exists", "equal", "wrong-value", "wrong-effect", "noexecute"])
def test_taint_toleration_filter(case: Case) -> None:
    assert verdicts(TaintToleration(), case.pod, case.nodes) == case.want


def test_prefer_no_schedule_taints_score_lower() -> None:
    plugin, state, pod = TaintToleration(), CycleState(), make_pod().obj()
    nodes = [info(PREFER), info(CLEAN)]
    assert plugin.pre_score(state, pod, nodes, nodes) is None
    scores = {n.name: plugin.score(state, pod, n) for n in nodes}
    plugin.normalize_scores(state, pod, scores)
    assert scores == {"p": 0, "c": 100}
    tolerant = make_pod().toleration("spot", effect="PreferNoSchedule").obj()
    assert plugin.score(state, tolerant, nodes[0]) == 0


PORT_TAKEN = "node(s) didn't have free ports for the requested pod ports"


@pytest.mark.parametrize(("existing", "wanted", "want"), [
    (make_pod().host_port(80).obj(), make_pod().host_port(80).obj(), PORT_TAKEN),
    (make_pod().host_port(80).obj(), make_pod().host_port(80, "UDP").obj(), "ok"),
    (make_pod().host_port(80).obj(), make_pod().host_port(81).obj(), "ok"),
    (make_pod().host_port(80, host_ip="10.0.0.1").obj(), make_pod().host_port(80, host_ip="10.0.0.2").obj(), "ok"),
    (make_pod().host_port(80, host_ip="10.0.0.1").obj(), make_pod().host_port(80).obj(), PORT_TAKEN),
], ids=["same", "other-protocol", "other-port", "other-ips", "wildcard"])
def test_node_ports(existing: Pod, wanted: Pod, want: str) -> None:
    assert verdicts(NodePorts(), wanted, [info(CLEAN, existing)]) == {"c": want}


def test_a_deleted_pod_frees_its_port() -> None:
    holder = make_pod().name("holder").host_port(80).obj()
    node = info(CLEAN, holder)
    node.remove_pod(holder.key)
    assert verdicts(NodePorts(), make_pod().host_port(80).obj(), [node]) == {"c": "ok"}


def test_extended_resources_fit() -> None:
    gpu_node = make_node().name("g").allocatable("example.com/gpu", "2").obj()
    pod = make_pod().extended("example.com/gpu", "2").obj()
    assert verdicts(NodeResourcesFit(), pod, [info(gpu_node), info(CLEAN)]) == {
        "g": "ok", "c": "Insufficient example.com/gpu"}
    assert verdicts(NodeResourcesFit(), pod, [info(gpu_node, make_pod().extended("example.com/gpu", "1").obj())]) == {
        "g": "Insufficient example.com/gpu"}


def web(name: str) -> Pod:
    return make_pod().name(name).label("app", "web").obj()


Z1A = make_node().name("z1a").label("zone", "z1").obj()
Z1B = make_node().name("z1b").label("zone", "z1").obj()
Z2A = make_node().name("z2a").label("zone", "z2").obj()
SPREAD = "node(s) didn't match pod topology spread constraints"


@pytest.mark.parametrize("case", [
    # z1 has 2, z2 has 0: with maxSkew 1 only z2 is allowed
    Case(make_pod().label("app", "web").spread(1, "zone", app="web").obj(),
         [info(Z1A, web("a")), info(Z1B, web("b")), info(Z2A)], {"z1a": SPREAD, "z1b": SPREAD, "z2a": "ok"}),
    Case(make_pod().label("app", "web").spread(2, "zone", app="web").obj(),
         [info(Z1A, web("a")), info(Z1B, web("b")), info(Z2A)], {"z1a": SPREAD, "z1b": SPREAD, "z2a": "ok"}),
    Case(make_pod().label("app", "web").spread(3, "zone", app="web").obj(),
         [info(Z1A, web("a")), info(Z1B, web("b")), info(Z2A)], {"z1a": "ok", "z1b": "ok", "z2a": "ok"}),
    # a node without the key cannot take part
    Case(make_pod().label("app", "web").spread(1, "zone", app="web").obj(), [info(Z2A), info(CLEAN)],
         {"z2a": "ok", "c": SPREAD + " (missing required label)"}),
    # minDomains 3 with only 2 zones: the minimum counts as 0, so z2 (1 pod) is full at maxSkew 1
    Case(make_pod().label("app", "web").spread(1, "zone", min_domains=3, app="web").obj(),
         [info(Z1A, web("a")), info(Z2A, web("b"))], {"z1a": SPREAD, "z2a": SPREAD}),
    # a pod not matching its own selector does not count itself
    Case(make_pod().label("app", "other").spread(1, "zone", app="web").obj(),
         [info(Z1A, web("a")), info(Z2A)], {"z1a": "ok", "z2a": "ok"}),
], ids=["skew1", "skew2", "skew3", "missing-key", "min-domains", "not-self"])
def test_topology_spread_filter(case: Case) -> None:
    assert verdicts(PodTopologySpread(), case.pod, case.nodes) == case.want


def test_topology_spread_schedule_anyway_prefers_the_emptier_zone() -> None:
    pod = make_pod().label("app", "web").spread(1, "zone", when="ScheduleAnyway", app="web").obj()
    nodes = [info(Z1A, web("a"), web("b")), info(Z2A)]
    plugin, state = PodTopologySpread(), CycleState()
    assert plugin.pre_score(state, pod, nodes, nodes) is None
    scores = {n.name: plugin.score(state, pod, n) for n in nodes}
    plugin.normalize_scores(state, pod, scores)
    assert scores["z2a"] == 100 and scores["z1a"] < scores["z2a"]


AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"


@pytest.mark.parametrize("case", [
    Case(make_pod().pod_affinity("zone", app="web").obj(), [info(Z1A, web("a")), info(Z1B), info(Z2A)],
         {"z1a": "ok", "z1b": "ok", "z2a": AFFINITY}),
    Case(make_pod().pod_affinity("zone", anti=True, app="web").obj(), [info(Z1A, web("a")), info(Z1B), info(Z2A)],
         {"z1a": ANTI, "z1b": ANTI, "z2a": "ok"}),
    Case(make_pod().label("app", "db").obj(),
         [info(Z1A, make_pod().name("lonely").pod_affinity("zone", anti=True, app="db").obj()), info(Z2A)],
         {"z1a": EXISTING_ANTI, "z2a": "ok"}),
    # the first pod of a group that matches its own affinity may go anywhere
    Case(make_pod().label("app", "web").pod_affinity("zone", app="web").obj(), [info(Z1A), info(Z2A)],
         {"z1a": "ok", "z2a": "ok"}),
    # but not when no pod matches and it does not match itself
    Case(make_pod().pod_affinity("zone", app="web").obj(), [info(Z1A), info(Z2A)],
         {"z1a": AFFINITY, "z2a": AFFINITY}),
    Case(make_pod().pod_affinity("zone", app="web").obj(), [info(Z1A, web("a")), info(CLEAN)],
         {"z1a": "ok", "c": AFFINITY}),
], ids=["affinity", "anti-affinity", "existing-anti", "first-of-group", "no-match", "missing-key"])
def test_inter_pod_affinity_filter(case: Case) -> None:
    assert verdicts(InterPodAffinity(), case.pod, case.nodes) == case.want


def test_preferred_pod_affinity_scores() -> None:
    pod = (make_pod().pod_affinity("zone", weight=10, app="web")
           .pod_affinity("zone", anti=True, weight=5, app="db").obj())
    nodes = [info(Z1A, web("a")), info(Z2A, make_pod().name("d").label("app", "db").obj()), info(CLEAN)]
    plugin, state = InterPodAffinity(), CycleState()
    assert plugin.pre_score(state, pod, nodes, nodes) is None
    scores = {n.name: plugin.score(state, pod, n) for n in nodes}
    plugin.normalize_scores(state, pod, scores)
    assert scores == {"z1a": 100, "z2a": 0, "c": 33}


def test_balanced_allocation_prefers_even_use() -> None:
    even = info(make_node().name("even").capacity(cpu="4", memory="4Gi").obj())
    skewed = info(make_node().name("skewed").capacity(cpu="4", memory="64Gi").obj())
    pod = make_pod().req(cpu="2", memory="2Gi").obj()
    plugin, state = BalancedAllocation(), CycleState()
    plugin.pre_score(state, pod, [even, skewed], [even, skewed])
    assert plugin.score(state, pod, even) == 100
    assert plugin.score(state, pod, skewed) < 80


def test_image_locality_prefers_nodes_with_the_image() -> None:
    assert normalized_image_name("busybox") == "docker.io/library/busybox:latest"
    assert normalized_image_name("registry.example.com/app:1") == "registry.example.com/app:1"
    big = info(make_node().name("big").image("docker.io/library/app:1", 500).obj())
    none = info(make_node().name("none").obj())
    pod = make_pod().image("app:1").obj()
    plugin, state = ImageLocality(), CycleState()
    plugin.pre_score(state, pod, [big, none], [big, none])
    assert plugin.score(state, pod, big) > 0 and plugin.score(state, pod, none) == 0


def algorithm() -> SchedulingAlgorithm:
    return SchedulingAlgorithm(Framework(Profile(plugins=DEFAULT_PLUGINS, score_weights=DEFAULT_SCORE_WEIGHTS),
                                         IN_TREE_REGISTRY))


def test_preemption_picks_the_cheapest_victims() -> None:
    small = make_node().name("n1").capacity(cpu="2").obj()
    other = make_node().name("n2").capacity(cpu="2").obj()
    nodes = [info(small, make_pod().name("low").priority(1).req(cpu="2").obj()),
             info(other, make_pod().name("mid").priority(5).req(cpu="2").obj())]
    with pytest.raises(FitError) as e:
        algorithm().schedule(make_pod().name("vip").priority(10).req(cpu="2").obj(), nodes)
    nomination = e.value.nomination
    assert nomination is not None and nomination.nominated_node == "n1"
    assert [v.metadata.name for v in nomination.victims] == ["low"]


def test_preemption_keeps_victims_it_does_not_need() -> None:
    node = make_node().name("n1").capacity(cpu="3").obj()
    nodes = [info(node, make_pod().name("a").priority(1).req(cpu="1").obj(),
                  make_pod().name("b").priority(2).req(cpu="1").obj(),
                  make_pod().name("c").priority(3).req(cpu="1").obj())]
    with pytest.raises(FitError) as e:
        algorithm().schedule(make_pod().name("vip").priority(10).req(cpu="2").obj(), nodes)
    assert e.value.nomination is not None
    assert sorted(v.metadata.name or "" for v in e.value.nomination.victims) == ["a", "b"]


def test_no_preemption_of_equal_priority_or_with_policy_never() -> None:
    node = make_node().name("n1").capacity(cpu="2").obj()
    nodes = [info(node, make_pod().name("peer").priority(10).req(cpu="2").obj())]
    with pytest.raises(FitError) as e:
        algorithm().schedule(make_pod().priority(10).req(cpu="2").obj(), nodes)
    assert e.value.nomination is None
    assert str(e.value).endswith(
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..")
    with pytest.raises(FitError) as e:
        algorithm().schedule(make_pod().priority(100).preemption_policy("Never").req(cpu="2").obj(), nodes)
    assert e.value.nomination is None and "preemptionPolicy=Never" in str(e.value)
