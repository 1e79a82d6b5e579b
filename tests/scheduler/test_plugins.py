"""The in-tree plugins, the framework runtime and the scheduling algorithm, table-driven."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kube.api import Node, Pod
from scheduler.cache import NodeInfo, PodInfo
from scheduler.framework import (
    Code,
    CycleState,
    Diagnosis,
    FitError,
    Framework,
    Profile,
    Resource,
    Status,
    pod_non_zero_requests,
    pod_requests,
)
from scheduler.plugins import DEFAULT_PLUGINS, DEFAULT_SCORE_WEIGHTS, IN_TREE_REGISTRY
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ready import NodeReady
from scheduler.plugins.node_resources_fit import MOST_ALLOCATED, NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.schedule_one import SchedulingAlgorithm, num_feasible_nodes_to_find
from tests.scheduler.builders import make_node, make_pod

Mi = 1024 * 1024


def node_info(node: Node, *pods: Pod) -> NodeInfo:
    info = NodeInfo()
    info.set_node(node)
    for p in pods:
        info.add_pod(PodInfo.of(p))
    return info


def run_filter(plugin: object, pod: Pod, info: NodeInfo) -> Status | None:
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        plugin.pre_filter(state, pod, [info])
    return plugin.filter(state, pod, info)  # type: ignore[attr-defined, no-any-return]


@dataclass
class FilterCase:
    id: str
    pod: Pod
    node: Node
    code: Code | None  # None: the node fits
    reasons: tuple[str, ...] = ()
    existing: tuple[Pod, ...] = ()


def case(id: str, pod: Pod, node: Node, code: Code | None = None, *reasons: str,
         existing: tuple[Pod, ...] = ()) -> FilterCase:
    return FilterCase(id, pod, node, code, reasons, existing)


U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
small = make_node().name("n1").capacity(cpu="1", memory="1Gi", pods=3)

FILTER_CASES = {
    NodeUnschedulable: [
        case("schedulable", make_pod().obj(), make_node().obj()),
        case("cordoned", make_pod().obj(), make_node().unschedulable().obj(), UU, "node(s) were unschedulable"),
        case("cordoned-tolerated", make_pod().toleration("node.kubernetes.io/unschedulable").obj(),
             make_node().unschedulable().obj()),
        case("uncordoned", make_pod().obj(), make_node().unschedulable(False).obj()),
    ],
    NodeReady: [
        case("ready", make_pod().obj(), make_node().obj()),
        case("not-ready", make_pod().obj(), make_node().not_ready().obj(), UU, "node(s) were not ready"),
        case("unknown", make_pod().obj(), make_node().ready("Unknown").obj(), UU, "node(s) were not ready"),
        case("no-conditions", make_pod().obj(), make_node().no_conditions().obj(), UU, "node(s) were not ready"),
        case("not-ready-tolerated", make_pod().toleration("node.kubernetes.io/not-ready").obj(),
             make_node().not_ready().obj()),
        case("other-toleration", make_pod().toleration("foo").obj(), make_node().not_ready().obj(), UU,
             "node(s) were not ready"),
    ],
    NodeName: [
        case("no-node-name", make_pod().obj(), make_node().name("n1").obj()),
        case("matching", make_pod().node("n1").obj(), make_node().name("n1").obj()),
        case("other-node", make_pod().node("n2").obj(), make_node().name("n1").obj(), UU,
             "node(s) didn't match the requested node name"),
    ],
    NodeResourcesFit: [
        case("fits", make_pod().req(cpu="500m", memory="512Mi").obj(), small.obj()),
        case("exactly-fits", make_pod().req(cpu="1", memory="1Gi").obj(), small.obj()),
        case("insufficient-cpu", make_pod().req(cpu="1100m").obj(), small.obj(), U, "Insufficient cpu"),
        case("insufficient-memory", make_pod().req(memory="2Gi").obj(), small.obj(), U, "Insufficient memory"),
        case("insufficient-both", make_pod().req(cpu="2", memory="2Gi").obj(), small.obj(), U,
             "Insufficient cpu", "Insufficient memory"),
        case("sum-of-containers", make_pod().req(cpu="600m").req(cpu="600m").obj(), small.obj(), U,
             "Insufficient cpu"),
        case("existing-pods-count", make_pod().req(cpu="600m").obj(), small.obj(), U, "Insufficient cpu",
             existing=(make_pod().name("a").req(cpu="500m").obj(),)),
        case("existing-pods-leave-room", make_pod().req(cpu="500m").obj(), small.obj(),
             existing=(make_pod().name("a").req(cpu="500m").obj(),)),
        case("init-container-max", make_pod().req(cpu="200m").init_req(cpu="1500m").obj(), small.obj(), U,
             "Insufficient cpu"),
        case("init-container-smaller", make_pod().req(cpu="800m").init_req(cpu="500m").obj(), small.obj()),
        case("limits-count-as-requests", make_pod().req(cpu="2", limits=True).obj(), small.obj(), U,
             "Insufficient cpu"),
        case("no-requests-fits", make_pod().obj(), small.obj(),
             existing=(make_pod().name("a").req(cpu="1", memory="1Gi").obj(),)),
        case("no-requests-needs-a-pod-slot", make_pod().obj(), small.obj(), U, "Too many pods",
             existing=tuple(make_pod().name(f"e{i}").obj() for i in range(3))),
        case("too-many-pods-and-cpu", make_pod().req(cpu="2").obj(), small.obj(), U, "Too many pods",
             "Insufficient cpu", existing=tuple(make_pod().name(f"e{i}").obj() for i in range(3))),
        case("node-without-allocatable", make_pod().obj(),
             Node.model_validate({"metadata": {"name": "bare"}}), U, "Too many pods"),
    ],
}


@pytest.mark.parametrize(("plugin_cls", "c"), [(cls, c) for cls, cases in FILTER_CASES.items() for c in cases],
                         ids=lambda v: v.id if isinstance(v, FilterCase) else v.__name__)
def test_filter(plugin_cls: type, c: FilterCase) -> None:
    plugin = plugin_cls()
    status = run_filter(plugin, c.pod, node_info(c.node, *c.existing))
    if c.code is None:
        assert status is None or status.is_success(), status
    else:
        assert status is not None and status.code is c.code
        assert status.reasons == c.reasons
        assert status.plugin == plugin.name


@pytest.mark.parametrize(("pod", "want", "want_non_zero"), [
    (make_pod().req(cpu="250m", memory="64Mi").obj(), Resource(250, 64 * Mi), Resource(250, 64 * Mi)),
    (make_pod().container().obj(), Resource(), Resource(100, 200 * Mi)),
    (make_pod().req(cpu="1").container().obj(), Resource(1000), Resource(1100, 400 * Mi)),
    (make_pod().req(cpu="100m").init_req(cpu="300m", memory="1Mi").obj(), Resource(300, Mi), Resource(300, 200 * Mi)),
    (make_pod().req(memory="1Gi", limits=True).obj(), Resource(0, 1024 * Mi), Resource(100, 1024 * Mi)),
], ids=["requests", "best-effort", "mixed", "init-max", "limits-only"])
def test_pod_requests(pod: Pod, want: Resource, want_non_zero: Resource) -> None:
    assert pod_requests(pod) == want
    assert pod_non_zero_requests(pod) == want_non_zero


def test_pod_overhead_is_added() -> None:
    pod = Pod.model_validate({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
        "overhead": {"cpu": "50m", "memory": "10Mi"}}})
    assert pod_requests(pod) == Resource(150, 10 * Mi)


@pytest.mark.parametrize(("pod", "existing", "want"), [
    # free after placing: cpu (4000-1000)/4000 = 75, memory (8Gi-2Gi)/8Gi = 75
    (make_pod().req(cpu="1", memory="2Gi").obj(), (), 75),
    (make_pod().req(cpu="4", memory="8Gi").obj(), (), 0),
    # existing 2 cpu / 2Gi: cpu (4000-3000)/4000 = 25, memory (8Gi-4Gi)/8Gi = 50 -> 37
    (make_pod().req(cpu="1", memory="2Gi").obj(), (make_pod().name("e").req(cpu="2", memory="2Gi").obj(),), 37),
    # best effort counts as 100m / 200Mi: cpu 3900/4000 -> 97, memory (8192-200)/8192 -> 97
    (make_pod().obj(), (), 97),
    # more than allocatable scores 0 for that resource
    (make_pod().req(cpu="8", memory="2Gi").obj(), (), 37),
], ids=["quarter", "full", "with-existing", "best-effort", "over-cpu"])
def test_least_allocated_score(pod: Pod, existing: tuple[Pod, ...], want: int) -> None:
    plugin = NodeResourcesFit()
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    assert plugin.score(state, pod, node_info(make_node().obj(), *existing)) == want


def test_most_allocated_score_prefers_fuller_nodes() -> None:
    plugin = NodeResourcesFit(scoring_strategy=MOST_ALLOCATED)
    pod = make_pod().req(cpu="1", memory="2Gi").obj()
    state = CycleState()
    assert plugin.score(state, pod, node_info(make_node().obj())) == 25
    existing = make_pod().name("e").req(cpu="2", memory="2Gi").obj()
    assert plugin.score(state, pod, node_info(make_node().obj(), existing)) == (75 + 50) // 2


@pytest.mark.parametrize(("statuses", "nodes", "want"), [
    ({"a": ("node(s) were unschedulable",), "b": ("Insufficient cpu",), "c": ("Insufficient cpu",)}, 3,
     "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."),
    ({"a": ("Insufficient cpu", "Insufficient memory"), "b": ("Insufficient memory",)}, 2,
     "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."),
    ({"a": ("Too many pods",), "b": ("node(s) were not ready",), "c": ("node(s) were not ready",)}, 3,
     "0/3 nodes are available: 1 Too many pods, 2 node(s) were not ready."),
    ({}, 0, "no nodes available to schedule pods"),
], ids=["brief-example", "multi-reason-node", "sorted-as-strings", "no-nodes"])
def test_fit_error_message(statuses: dict[str, tuple[str, ...]], nodes: int, want: str) -> None:
    diagnosis = Diagnosis()
    for node, reasons in statuses.items():
        diagnosis.record(node, Status.unschedulable(*reasons, plugin="X"))
    assert FitError(pod_key="default/p", num_all_nodes=nodes, diagnosis=diagnosis).message == want


def default_algorithm() -> SchedulingAlgorithm:
    profile = Profile(plugins=DEFAULT_PLUGINS, score_weights=DEFAULT_SCORE_WEIGHTS)
    return SchedulingAlgorithm(Framework(profile, IN_TREE_REGISTRY))


def test_framework_discovers_extension_points() -> None:
    fwk = Framework(Profile(plugins=DEFAULT_PLUGINS, score_weights=DEFAULT_SCORE_WEIGHTS), IN_TREE_REGISTRY)
    assert [p.name for p in fwk.filter_plugins] == [
        "NodeUnschedulable", "NodeName", "NodeReady", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "VolumeBinding", "PodTopologySpread", "InterPodAffinity"]
    assert [p.name for p in fwk.pre_filter_plugins] == [
        "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread", "InterPodAffinity"]
    assert [p.name for p in fwk.post_filter_plugins] == ["DefaultPreemption"]
    assert [p.name for p in fwk.score_plugins] == [
        "TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
        "NodeResourcesBalancedAllocation", "ImageLocality"]
    with pytest.raises(ValueError, match="not in the registry"):
        Framework(Profile(plugins=("Nope",)), IN_TREE_REGISTRY)


def test_schedule_reports_summary_when_nothing_fits() -> None:
    nodes = [node_info(make_node().name("a").unschedulable().obj()),
             node_info(make_node().name("b").capacity(cpu="1").obj()),
             node_info(make_node().name("c").capacity(cpu="1").obj())]
    with pytest.raises(FitError) as e:
        default_algorithm().schedule(make_pod().req(cpu="2").obj(), nodes)
    assert str(e.value) == ("0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. "
                            "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling., "
                            "2 No preemption victims found for incoming pod..")
    assert e.value.diagnosis.unschedulable_plugins == {"NodeUnschedulable", "NodeResourcesFit"}


def test_schedule_picks_least_allocated_node() -> None:
    busy = node_info(make_node().name("a").obj(), make_pod().name("e").req(cpu="3").obj())
    idle = node_info(make_node().name("b").obj())
    result = default_algorithm().schedule(make_pod().req(cpu="500m").obj(), [busy, idle])
    assert (result.suggested_host, result.feasible_nodes) == ("b", 2)


def test_schedule_spreads_equal_pods_over_equal_nodes() -> None:
    """Assumed pods count at once, and ties go to the node with fewer pods, then the name."""
    algorithm = default_algorithm()
    nodes = [node_info(make_node().name(n).obj()) for n in ("a", "b")]
    placed: list[str] = []
    for i in range(4):
        pod = make_pod().name(f"p{i}").obj()  # best effort: scores stay equal, only pod count differs
        host = algorithm.schedule(pod, nodes).suggested_host
        next(n for n in nodes if n.name == host).add_pod(PodInfo.of(pod))
        placed.append(host)
    assert placed == ["a", "b", "a", "b"]


@pytest.mark.parametrize(("nodes", "percentage", "want"), [
    (10, 0, 10), (99, 0, 99), (100, 0, 100), (1000, 0, 420), (5000, 0, 500), (10000, 0, 500),
    (1000, 50, 500), (1000, 1, 100), (200, 100, 200),
])
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, want: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == want


def test_sampling_rotates_the_start_node() -> None:
    algorithm = default_algorithm()
    algorithm.percentage_of_nodes_to_score = 50
    nodes = [node_info(make_node().name(f"n{i:03}").obj()) for i in range(200)]
    first = algorithm.schedule(make_pod().obj(), nodes)
    assert first.evaluated_nodes == 100
    second = algorithm.schedule(make_pod().obj(), nodes)
    assert second.evaluated_nodes == 100
    assert first.suggested_host < "n100" <= second.suggested_host
