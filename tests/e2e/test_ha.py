"""The HA layout survives losing any member: 3 etcd members, 2 API servers behind HAProxy,
2 controller-managers and 2 schedulers, through rounds of SIGKILL and SIGSTOP of the etcd
leader, an etcd follower, each API server and the leading controller-manager while a
Deployment rolls out and scales and a client writes ConfigMaps through the balancer
(`kube.testing.robustness.failover`). Every rollout completes with the members gone, every
acknowledged write is stored, and the standby controller-manager takes the Lease over."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from kube.testing.robustness.failover import run_failover

pytestmark = pytest.mark.e2e

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated", "--etcd-members", "3", "--apiservers", "2",
                "--controller-managers", "2", "--schedulers", "2")


def test_status_names_every_member(cluster: Cluster) -> None:
    status = cluster.status()
    names = {c["name"] for c in status["components"]}
    assert {n for n in names if "etcd" in n} == {"etcd-0", "etcd-1", "etcd-2"}
    assert {n for n in names if re.fullmatch(r"apiserver-\d+", n)} == {"apiserver-0", "apiserver-1"}
    assert "apiserver-lb" in names
    assert all(c["alive"] for c in status["components"]), status["components"]
    assert status["apiserver"] == f"https://127.0.0.1:{cluster.port}"
    assert len(status["etcd"]) == 3 and all(u.startswith("https://") for u in status["etcd"])
    # The kubernetes Service's endpoints name the balancer, the address every server shares.
    endpoints = json.loads(cluster.kubectl_ok("get", "endpoints", "kubernetes", "-o", "json"))
    assert [p["port"] for p in endpoints["subsets"][0]["ports"]] == [cluster.port]


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: traced}
spec:
  replicas: 2
  selector: {matchLabels: {app: traced}}
  template:
    metadata: {labels: {app: traced}}
    spec: {containers: [{name: c, image: busybox}]}
"""


def test_traces_are_whole_whichever_server_got_the_spans(cluster: Cluster, ns: str) -> None:
    """Components export spans through the balancer, so they land on both API servers; each
    server answers with the whole chain (the servers share the span file)."""
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=DEPLOYMENT)

    def whole() -> dict[str, Any] | None:
        out = cluster.pkctl("trace", "deploy/traced", "-n", ns, "-o", "json")
        if out.returncode != 0:
            return None
        view = json.loads(out.stdout)
        actors = {h["actor"].split("/")[0] for h in view["hops"]}
        kubelet_pods = {h["object"] for h in view["hops"] if h["actor"].startswith("kubelet")}
        wanted = {"kube-apiserver", "deployment-controller", "replicaset-controller", "default-scheduler", "kubelet"}
        return view if wanted <= actors and len(kubelet_pods) >= 2 else None

    assert eventually_sync(whole, timeout=60) is not None
    # Asked several times, so both servers behind the balancer answer: each sees the whole trace.
    for _ in range(4):
        assert whole() is not None


def test_survives_losing_any_member(cluster: Cluster) -> None:
    report = asyncio.run(run_failover(cluster.data_dir, hold=20.0))
    print("failover figures:", json.dumps(report.to_json()))
    assert not report.violations, report.violations
    assert [r.name for r in report.rounds] == ["kill", "stop", "stop-follower"]
    stop = report.rounds[1]
    assert stop.cm_leader_before != stop.cm_leader_after, "the standby controller-manager did not take over"
    assert all(r.writes_acknowledged > 0 for r in report.rounds), report.to_json()
