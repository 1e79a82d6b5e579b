"""Disruption budgets and leader election on a whole cluster (simulated nodes) with the real kubectl.

The cluster runs two controller-managers and two schedulers (`picokube up
--controller-managers 2 --schedulers 2`): one of each leads through its Lease. `kubectl
drain` waits while a PodDisruptionBudget allows no eviction and proceeds once the
Deployment grows; SIGKILLing the leading controller-manager hands the work to the standby,
and a Deployment scaled afterwards converges without duplicate pods.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CLUSTER_ARGS = ("--nodes", "2", "--runtime", "simulated", "--pod-start-delay", "0.2",
                "--controller-managers", "2", "--schedulers", "2")


def deployment(cluster: Cluster, ns: str, name: str, replicas: int) -> None:
    cluster.kubectl_ok("create", "deployment", name, "-n", ns, "--image=busybox:1.36", f"--replicas={replicas}")


def pods(cluster: Cluster, ns: str, app: str) -> list[dict[str, Any]]:
    listed = json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-l", f"app={app}", "-o", "json"))
    return [p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")]


def on_node(cluster: Cluster, ns: str, app: str, node: str) -> list[str]:
    return [p["metadata"]["name"] for p in pods(cluster, ns, app) if p["spec"].get("nodeName") == node]


def ready_count(cluster: Cluster, ns: str, app: str) -> int:
    return sum(1 for p in pods(cluster, ns, app) if any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []))


def test_kubectl_drain_waits_for_the_disruption_budget(cluster: Cluster, ns: str, tmp_path: Path) -> None:
    deployment(cluster, ns, "web", 4)
    eventually_sync(lambda: ready_count(cluster, ns, "web") == 4, timeout=60, message="4 ready pods")
    on_node_1 = on_node(cluster, ns, "web", "node-1")
    assert on_node_1, "pods are spread over both nodes"
    cluster.kubectl_ok("create", "poddisruptionbudget", "web", "-n", ns, "--selector=app=web", "--min-available=4")
    eventually_sync(lambda: cluster.kubectl_ok(
        "get", "pdb", "web", "-n", ns, "-o", "jsonpath={.status.disruptionsAllowed}/{.status.currentHealthy}")
        == "0/4", timeout=30, message="the budget is computed: 4 healthy, none to spare")
    stderr_path = tmp_path / "drain.err"
    with stderr_path.open("w") as stderr:
        drain = subprocess.Popen(["kubectl", "--kubeconfig", str(cluster.kubeconfig), "drain", "node-1",
                                  "--ignore-daemonsets", "--timeout=150s", "--pod-selector=app=web"],
                                 stdout=subprocess.PIPE, stderr=stderr, text=True, env=cluster.env())
    try:
        refused = "Cannot evict pod as it would violate the pod's disruption budget."
        eventually_sync(lambda: refused in stderr_path.read_text(), timeout=30, message="kubectl told to wait")
        assert drain.poll() is None, "drain waits while the budget allows no eviction"
        assert on_node(cluster, ns, "web", "node-1") == on_node_1
        cluster.kubectl_ok("scale", "deployment", "web", "-n", ns, "--replicas=5")
        out, _ = drain.communicate(timeout=150)
    finally:
        if drain.poll() is None:
            drain.kill()
    err = stderr_path.read_text()
    assert drain.returncode == 0, err
    assert "(will retry after 5s): " + refused in err
    assert out.rstrip().endswith("node/node-1 drained")
    assert not on_node(cluster, ns, "web", "node-1")
    cluster.kubectl_ok("uncordon", "node-1")


def holder(cluster: Cluster, lease: str) -> str:
    return cluster.kubectl_ok("get", "lease", lease, "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}")


def component_holding(cluster: Cluster, identity: str) -> str:
    """The picokube component whose log says it became leader as `identity`."""
    for log in sorted((cluster.data_dir / "logs").glob("controller-manager*.log")):
        if identity in log.read_text():
            return log.stem
    raise AssertionError(f"no controller-manager log names {identity}")


def test_a_standby_controller_manager_takes_over_from_a_killed_leader(cluster: Cluster, ns: str) -> None:
    leader = eventually_sync(lambda: holder(cluster, "kube-controller-manager"), timeout=30)
    name = component_holding(cluster, leader)
    eventually_sync(lambda: holder(cluster, "kube-scheduler"), timeout=30, message="a scheduler leads")
    deployment(cluster, ns, "api", 2)
    eventually_sync(lambda: ready_count(cluster, ns, "api") == 2, timeout=60, message="2 ready pods")
    # Frozen, not yet killed: the supervisor would restart a killed leader at once, and the
    # restarted process may win the Lease back; a frozen one can only lose it to the standby.
    frozen = cluster.pid_of(name)
    os.kill(frozen, signal.SIGSTOP)
    killed_at = time.monotonic()
    cluster.kubectl_ok("scale", "deployment", "api", "-n", ns, "--replicas=5")
    def new_holder() -> str | None:
        current = holder(cluster, "kube-controller-manager")
        return current if current and current != leader else None
    new = eventually_sync(new_holder, timeout=40, message="the standby acquires the Lease")
    assert time.monotonic() - killed_at < 15 + 10, "within the lease duration (and a few retry periods)"
    assert component_holding(cluster, new) != name
    os.kill(frozen, signal.SIGKILL)
    eventually_sync(lambda: ready_count(cluster, ns, "api") == 5, timeout=60, message="5 ready pods")
    assert len(pods(cluster, ns, "api")) == 5
    rs = json.loads(cluster.kubectl_ok("get", "rs", "-n", ns, "-l", "app=api", "-o", "json"))["items"]
    assert len(rs) == 1 and rs[0]["status"]["replicas"] == 5
