"""Scheduling as a user sees it with the real kubectl, on three small simulated nodes.

Each node offers 2 cpu, 4Gi and 10 pods, so fit, spreading and preemption show with a
handful of pods. Every test works in its own namespace and puts back any node label, taint
or cordon it changed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CLUSTER_ARGS = ("--nodes", "3", "--runtime", "simulated", "--node-capacity", "cpu=2,memory=4Gi,pods=10")
NODES = ("node-1", "node-2", "node-3")






def apply(cluster: Cluster, manifest: str) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=manifest)


def pod_yaml(name: str, ns: str, *, cpu: str = "100m", labels: str = "{}", extra: str = "",
             priority_class: str | None = None) -> str:
    priority = f"  priorityClassName: {priority_class}\n" if priority_class else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {labels}}}
spec:
{priority}{extra}  containers:
  - name: app
    image: busybox:1.36
    resources: {{requests: {{cpu: {cpu}, memory: 64Mi}}}}
"""


def pods(cluster: Cluster, ns: str) -> list[dict]:  # type: ignore[type-arg]
    return list(json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-o", "json"))["items"])


def placement(cluster: Cluster, ns: str) -> dict[str, str]:
    """pod name -> node ("" while pending), live pods only."""
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in pods(cluster, ns)
            if not p["metadata"].get("deletionTimestamp")}


def settled(cluster: Cluster, ns: str, bound: int, pending: int = 0) -> dict[str, str] | None:
    where = placement(cluster, ns)
    counts = Counter(bool(n) for n in where.values())
    return where if counts[True] == bound and counts[False] == pending else None


def wait_placed(cluster: Cluster, ns: str, bound: int, pending: int = 0, timeout: float = 60) -> dict[str, str]:
    result = eventually_sync(lambda: settled(cluster, ns, bound, pending), timeout=timeout,
                             message=f"{bound} bound, {pending} pending in {ns}")
    assert result is not None
    return result


def test_insufficient_cpu_is_explained_by_kubectl_describe(cluster: Cluster, ns: str) -> None:
    apply(cluster, pod_yaml("huge", ns, cpu="3"))

    def explained() -> str | None:
        out = cluster.kubectl_ok("describe", "pod", "huge", "-n", ns)
        return out if "FailedScheduling" in out else None
    out = eventually_sync(explained, timeout=30, message="FailedScheduling event")
    assert out is not None
    assert "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: " \
           "3 No preemption victims found for incoming pod.." in out
    assert re.search(r"^Status:\s+Pending$", out, re.M), out
    conditions = pods(cluster, ns)[0]["status"]["conditions"]
    assert {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}.items() <= conditions[0].items()


def test_node_selector_and_required_node_affinity(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("label", "node", "node-2", "disk=ssd")
    try:
        apply(cluster, pod_yaml("fast", ns, extra="  nodeSelector: {disk: ssd}\n"))
        apply(cluster, pod_yaml("not-two", ns, extra="""\
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: NotIn, values: [node-1, node-2]}]
"""))
        apply(cluster, pod_yaml("nowhere", ns, extra="  nodeSelector: {disk: nvme}\n"))
        where = wait_placed(cluster, ns, bound=2, pending=1)
        assert (where["fast"], where["not-two"], where["nowhere"]) == ("node-2", "node-3", "")
    finally:
        cluster.kubectl_ok("label", "node", "node-2", "disk-")


def test_taints_keep_intolerant_pods_away(cluster: Cluster, ns: str) -> None:
    for node in ("node-1", "node-2"):
        cluster.kubectl_ok("taint", "node", node, "dedicated=infra:NoSchedule")
    try:
        for i in range(3):
            apply(cluster, pod_yaml(f"plain-{i}", ns))
        apply(cluster, pod_yaml("tolerant", ns, extra="""\
  nodeSelector: {kubernetes.io/hostname: node-1}
  tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]
"""))
        where = wait_placed(cluster, ns, bound=4)
        assert {where[f"plain-{i}"] for i in range(3)} == {"node-3"}
        assert where["tolerant"] == "node-1"
    finally:
        for node in ("node-1", "node-2"):
            cluster.kubectl_ok("taint", "node", node, "dedicated-")


def test_cordoned_node_gets_no_new_pods(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("cordon", "node-3")
    try:
        for i in range(4):
            apply(cluster, pod_yaml(f"p-{i}", ns))
        where = wait_placed(cluster, ns, bound=4)
        assert "node-3" not in where.values()
        out = cluster.kubectl_ok("get", "node", "node-3")
        assert "SchedulingDisabled" in out
    finally:
        cluster.kubectl_ok("uncordon", "node-3")


def test_pod_anti_affinity_puts_one_per_node_and_affinity_joins(cluster: Cluster, ns: str) -> None:
    apply(cluster, f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: lonely, namespace: {ns}}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: lonely}}}}
  template:
    metadata: {{labels: {{app: lonely}}}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {{labelSelector: {{matchLabels: {{app: lonely}}}}, topologyKey: kubernetes.io/hostname}}
      containers:
      - {{name: app, image: busybox:1.36, resources: {{requests: {{cpu: 50m}}}}}}
""")
    where = wait_placed(cluster, ns, bound=3, pending=1)
    assert sorted(n for n in where.values() if n) == list(NODES)
    stuck = next(name for name, node in where.items() if not node)

    def explained() -> bool:
        # The pods already placed forbid their nodes to it, and that is checked first, as upstream.
        return "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity rules." in \
            cluster.kubectl_ok("describe", "pod", stuck, "-n", ns)
    eventually_sync(explained, timeout=30, message="anti-affinity explained")

    apply(cluster, pod_yaml("friend", ns, extra="""\
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: lonely}}, topologyKey: kubernetes.io/hostname}
"""))
    where = wait_placed(cluster, ns, bound=4, pending=1)
    assert where["friend"] in NODES


def test_topology_spread_over_nodes(cluster: Cluster, ns: str) -> None:
    apply(cluster, f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: spread, namespace: {ns}}}
spec:
  replicas: 6
  selector: {{matchLabels: {{app: spread}}}}
  template:
    metadata: {{labels: {{app: spread}}}}
    spec:
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
          labelSelector: {{matchLabels: {{app: spread}}}}}}
      containers:
      - {{name: app, image: busybox:1.36, resources: {{requests: {{cpu: 50m}}}}}}
""")
    where = wait_placed(cluster, ns, bound=6)
    assert sorted(Counter(where.values()).values()) == [2, 2, 2]


def test_a_burst_never_over_commits_a_node(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    manifest = "---\n".join(pod_yaml(f"burst-{i}", ns, cpu="500m") for i in range(20))
    apply(cluster, manifest)
    where = wait_placed(cluster, ns, bound=12, pending=8)  # 3 nodes x 2 cpu / 500m
    assert Counter(n for n in where.values() if n) == {"node-1": 4, "node-2": 4, "node-3": 4}


def test_higher_priority_pod_preempts_a_lower_one(cluster: Cluster, ns: str) -> None:
    apply(cluster, """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 100000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-low}
value: 10
""")
    try:
        for i in range(3):  # one per node, each taking most of its cpu
            apply(cluster, pod_yaml(f"low-{i}", ns, cpu="1500m", priority_class="e2e-low"))
        wait_placed(cluster, ns, bound=3)
        apply(cluster, pod_yaml("vip", ns, cpu="1500m", priority_class="e2e-high"))

        def placed() -> dict[str, str] | None:
            current = {p["metadata"]["name"]: p for p in pods(cluster, ns)}
            vip = current.get("vip")
            gone = [n for n in ("low-0", "low-1", "low-2") if n not in current
                    or current[n]["metadata"].get("deletionTimestamp")]
            if vip is None or not vip["spec"].get("nodeName") or len(gone) != 1:
                return None
            return {"node": vip["spec"]["nodeName"], "victim": gone[0],
                    "nominated": vip["status"].get("nominatedNodeName", "")}
        result = eventually_sync(placed, timeout=60, message="vip placed after preempting one pod")
        assert result is not None and result["nominated"] == result["node"]
        victim = f"involvedObject.name={result['victim']}"
        events = cluster.kubectl_ok("get", "events", "-n", ns, "--field-selector", victim)
        assert "Preempted" in events
        assert cluster.kubectl_ok("get", "pod", "vip", "-n", ns, "-o", "jsonpath={.spec.priority}") == "100000"
    finally:
        cluster.kubectl_ok("delete", "priorityclass", "e2e-high", "e2e-low")
