"""The whole chain as real processes: apply a Deployment, get Running pods on nodes."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from kube.api import Deployment, Pod, ReplicaSet
from kube.client import RESTClient, load_kubeconfig
from kube.testing.eventually import eventually, eventually_sync

pytestmark = pytest.mark.e2e

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: busybox
        resources:
          requests: {{cpu: 100m, memory: 64Mi}}
"""


def active(pods: list[Pod]) -> list[Pod]:
    return [p for p in pods if not p.metadata.deletion_timestamp and p.status.phase not in ("Succeeded", "Failed")]


async def running_pods(client: RESTClient, want: int) -> list[Pod]:
    pods = active((await client.list(Pod, "default", label_selector="app=web")).items)
    running = [p for p in pods if p.status.phase == "Running" and p.spec.node_name]
    return pods if len(pods) == want and len(running) == want else []


async def test_apply_to_running_pods_and_controller_restart(cluster: Any, tmp_path) -> None:  # type: ignore[no-untyped-def]
    manifest = tmp_path / "web.yaml"
    manifest.write_text(DEPLOYMENT.format(replicas=3))
    out = cluster.pkctl("apply", "-f", str(manifest))
    assert out.returncode == 0, out.stderr
    assert "deployment.apps/web created" in out.stdout

    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        pods = await eventually(lambda: running_pods(client, 3), timeout=60, message="3 Running pods")
        assert {p.spec.node_name for p in pods} <= {"node-1", "node-2"}
        assert all(p.status.pod_ip and p.status.host_ip for p in pods)

        # Deployment -> ReplicaSet -> Pod, each link a controller ownerReference with the owner's uid.
        deploy = await client.get(Deployment, "web", "default")
        rs_list = (await client.list(ReplicaSet, "default")).items
        assert len(rs_list) == 1
        rs = rs_list[0]
        assert (rs.metadata.name or "").startswith("web-")
        rs_ref = rs.metadata.controller_ref()
        assert rs_ref and rs_ref.kind == "Deployment" and rs_ref.uid == deploy.metadata.uid
        for p in pods:
            ref = p.metadata.controller_ref()
            assert ref and ref.kind == "ReplicaSet" and ref.uid == rs.metadata.uid

        # The real kubectl reads the same cluster with the kubeconfig `up` wrote.
        got = cluster.kubectl("get", "pods", "-o", "wide")
        assert got.returncode == 0, got.stderr
        lines = [line for line in got.stdout.splitlines()[1:] if line.startswith("web-")]
        assert len(lines) == 3 and all("Running" in line for line in lines), got.stdout

        # pods/log goes API server -> the pod's kubelet over mutual TLS, for pkctl and kubectl alike.
        name = str(pods[0].metadata.name)
        logs = cluster.pkctl("logs", name)
        assert logs.returncode == 0 and "started web with image busybox" in logs.stdout, logs.stderr
        logs = cluster.kubectl("logs", name)
        assert logs.returncode == 0 and "started web with image busybox" in logs.stdout, logs.stderr

        # Kill the controller-manager; the supervisor restarts it and it resumes from the API.
        old_pid = cluster.pid_of("controller-manager")
        os.kill(old_pid, signal.SIGKILL)
        manifest.write_text(DEPLOYMENT.format(replicas=5))
        out = cluster.pkctl("apply", "-f", str(manifest))
        assert out.returncode == 0 and "configured" in out.stdout, out.stdout + out.stderr
        eventually_sync(lambda: cluster.pid_of("controller-manager") != old_pid, timeout=30,
                        message="controller-manager restarted")
        pods = await eventually(lambda: running_pods(client, 5), timeout=60, message="5 Running pods")
        assert len((await client.list(ReplicaSet, "default")).items) == 1
        # And it stays at exactly five: no late duplicates from a replayed create.
        assert len(active((await client.list(Pod, "default", label_selector="app=web")).items)) == 5

        # Deleting the Deployment takes its ReplicaSet and pods with it (garbage collector, then
        # each pod's kubelet finishing the graceful delete).
        out = cluster.pkctl("delete", "deployment", "web")
        assert out.returncode == 0 and 'deployment.apps "web" deleted' in out.stdout, out.stderr

        async def all_gone() -> bool:
            pods = (await client.list(Pod, "default", label_selector="app=web")).items
            return not pods and not (await client.list(ReplicaSet, "default")).items

        await eventually(all_gone, timeout=60, message="ReplicaSet and pods collected")


def test_status_reports_every_component(cluster: Any) -> None:
    status = cluster.status()
    assert status["apiserver"] == f"https://127.0.0.1:{cluster.port}"
    assert status["kubeconfig"] == str(cluster.kubeconfig)
    names = {c["name"] for c in status["components"]}
    assert {"etcd", "apiserver", "controller-manager", "scheduler", "kubelet-node-1", "kubelet-node-2",
            "kube-proxy-node-1", "kube-proxy-node-2", "kube-dns"} <= names
    assert all(c["alive"] for c in status["components"])
    nodes = cluster.kubectl("get", "nodes")
    assert nodes.returncode == 0 and "node-1" in nodes.stdout and "node-2" in nodes.stdout
    assert nodes.stdout.count(" Ready ") == 2, nodes.stdout
