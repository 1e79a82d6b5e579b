"""Real containers run a Job to completion and a DaemonSet on every node, and a NoExecute taint evicts.

Two `picokube up --runtime cri` nodes: an Indexed Job's pods each print the index the kubelet
put in their environment and end Succeeded, exactly as many as completions; a Job whose
container exits 1 fails with BackoffLimitExceeded; a DaemonSet's pod runs on each node with
that node's pod subnet, leaves a node tainted NoExecute and comes back once the taint is gone.
Needs root, containerd, runc and the CNI plugins; in CI a skip here is a failure.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from picokube.containerd import containerd_available

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no CRI runtime: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "2", "--runtime", "cri")

_CONTAINER = {"name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent"}


def _apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))


def _pods(cluster: Cluster, ns: str, selector: str) -> list[dict[str, Any]]:
    out = json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-l", selector, "-o", "json"))
    return list(out["items"])


def test_an_indexed_job_runs_each_index_once_in_real_containers(cluster: Cluster, ns: str) -> None:
    _apply(cluster, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "count", "namespace": ns},
                     "spec": {"completions": 3, "parallelism": 2, "completionMode": "Indexed",
                              "template": {"spec": {"restartPolicy": "Never", "containers": [
                                  {**_CONTAINER, "command": ["sh", "-c", "echo index=$JOB_COMPLETION_INDEX"]}]}}}})
    cluster.kubectl_ok("wait", "--for=condition=complete", "job/count", "-n", ns, "--timeout=150s", timeout=160)
    job = json.loads(cluster.kubectl_ok("get", "job", "count", "-n", ns, "-o", "json"))
    assert job["status"]["succeeded"] == 3 and job["status"]["completedIndexes"] == "0-2", job["status"]
    pods = _pods(cluster, ns, "job-name=count")
    assert sorted(p["status"]["phase"] for p in pods) == ["Succeeded"] * 3
    printed = sorted(cluster.kubectl_ok("logs", p["metadata"]["name"], "-n", ns).strip() for p in pods)
    assert printed == ["index=0", "index=1", "index=2"]


def test_a_crashing_job_fails_once_its_backoff_limit_is_spent(cluster: Cluster, ns: str) -> None:
    _apply(cluster, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "crash", "namespace": ns},
                     "spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
                         {**_CONTAINER, "command": ["sh", "-c", "exit 1"]}]}}}})
    cluster.kubectl_ok("wait", "--for=condition=failed", "job/crash", "-n", ns, "--timeout=150s", timeout=160)
    job = json.loads(cluster.kubectl_ok("get", "job", "crash", "-n", ns, "-o", "json"))
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded", failed
    assert job["status"]["failed"] == 2


def test_a_daemonset_runs_on_every_node_and_leaves_a_tainted_one(cluster: Cluster, ns: str) -> None:
    labels = {"app": "agent"}
    _apply(cluster, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": ns},
                     "spec": {"selector": {"matchLabels": labels}, "template": {
                         "metadata": {"labels": labels},
                         "spec": {"terminationGracePeriodSeconds": 1, "containers": [
                             {**_CONTAINER, "command": ["sh", "-c", "exec sleep 3600"]}]}}}})
    cluster.kubectl_ok("rollout", "status", "daemonset/agent", "-n", ns, "--timeout=120s", timeout=130)

    def placed() -> dict[str, str] | None:
        running = {p["spec"].get("nodeName"): p["status"].get("podIP", "") for p in _pods(cluster, ns, "app=agent")
                   if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")}
        return running if set(running) == {"node-1", "node-2"} else None
    ips = eventually_sync(placed, timeout=60, interval=0.5, message="an agent on each node")
    assert ips["node-1"].startswith("10.88.1.") and ips["node-2"].startswith("10.88.2."), ips

    cluster.kubectl_ok("taint", "node", "node-2", "maintenance=now:NoExecute")
    try:
        eventually_sync(lambda: {p["spec"].get("nodeName") for p in _pods(cluster, ns, "app=agent")} == {"node-1"},
                        timeout=90, interval=0.5, message="the agent leaves the tainted node")
    finally:
        cluster.kubectl_ok("taint", "node", "node-2", "maintenance=now:NoExecute-")
    eventually_sync(placed, timeout=90, interval=0.5, message="the agent is back on the untainted node")
