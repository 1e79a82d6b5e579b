"""DaemonSets as a user drives them with the real kubectl, on a cluster of three simulated nodes.

`kubectl apply`, `rollout status`, `get ds`, `set image`, `rollout history` and `rollout undo`
(which kubectl itself performs by reading the DaemonSet's ControllerRevisions and patching the
DaemonSet with the chosen one): the controller places one pod per node through the scheduler,
rolls a new image out, and rolls back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from kube.api import DaemonSet, Pod
from kube.client import RESTClient, load_kubeconfig
from kube.podutil import is_pod_ready
from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

CLUSTER_ARGS = ("--nodes", "3", "--runtime", "simulated", "--pod-start-delay", "0.2")

MANIFEST = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: app
        image: busybox:1.36
"""


@pytest_asyncio.fixture
async def client(cluster: Cluster) -> AsyncIterator[RESTClient]:
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as c:
        yield c


async def ok(cluster: Cluster, *args: str, timeout: float = 120) -> str:
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(cluster.kubeconfig), *args, env=cluster.env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode == 0, f"kubectl {' '.join(args)} exited {proc.returncode}: {err.decode()}{out.decode()}"
    return out.decode()


async def images_by_node(client: RESTClient) -> dict[str, str] | None:
    pods = [p for p in (await client.list(Pod, "default", label_selector="app=agent")).items
            if p.metadata.deletion_timestamp is None]
    if not all(p.spec.node_name and is_pod_ready(p) for p in pods):
        return None
    nodes = [p.spec.node_name or "" for p in pods]
    return None if len(set(nodes)) != len(nodes) else {p.spec.node_name or "": p.spec.containers[0].image or ""
                                                      for p in pods}


async def test_daemonset_rollout_history_and_undo(cluster: Cluster, client: RESTClient, tmp_path: Path) -> None:
    path = tmp_path / "ds.yaml"
    path.write_text(MANIFEST)
    assert "daemonset.apps/agent created" in await ok(cluster, "apply", "-f", str(path))
    out = await ok(cluster, "rollout", "status", "ds/agent", "--timeout=90s")
    assert 'daemon set "agent" successfully rolled out' in out

    placed = await eventually(lambda: images_by_node(client), timeout=30, message="a ready pod on each node")
    assert len(placed) == 3 and set(placed.values()) == {"busybox:1.36"}

    header, row = (await ok(cluster, "get", "ds", "agent")).splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR",
                              "AGE"]
    assert row.split()[:7] == ["agent", "3", "3", "3", "3", "3", "<none>"]
    wide_header = (await ok(cluster, "get", "ds", "agent", "-o", "wide")).splitlines()[0].split()
    assert wide_header[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]

    await ok(cluster, "set", "image", "ds/agent", "app=busybox:1.37")
    out = await ok(cluster, "rollout", "status", "ds/agent", "--timeout=90s")
    assert 'daemon set "agent" successfully rolled out' in out

    async def all_on(image: str) -> dict[str, str] | None:
        found = await images_by_node(client)
        return found if found and len(found) == 3 and set(found.values()) == {image} else None

    await eventually(lambda: all_on("busybox:1.37"), timeout=30, message="every node runs the new image")
    history = await ok(cluster, "rollout", "history", "ds/agent")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    assert "busybox:1.37" in await ok(cluster, "rollout", "history", "ds/agent", "--revision=2")

    assert "daemonset.apps/agent rolled back" in await ok(cluster, "rollout", "undo", "ds/agent")
    await ok(cluster, "rollout", "status", "ds/agent", "--timeout=90s")
    await eventually(lambda: all_on("busybox:1.36"), timeout=60, message="every node runs the old image again")
    history = await ok(cluster, "rollout", "history", "ds/agent")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]
    revisions = (await ok(cluster, "get", "controllerrevisions")).splitlines()
    assert revisions[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert all("daemonset.apps/agent" in line for line in revisions[1:])


def pkctl(cluster: Cluster, *args: str) -> str:
    out = cluster.pkctl(*args)
    assert out.returncode == 0, f"pkctl {' '.join(args)}: {out.stderr}{out.stdout}"
    return out.stdout


async def test_pkctl_get_describe_and_rollout(cluster: Cluster, client: RESTClient, tmp_path: Path) -> None:
    path = tmp_path / "ds.yaml"
    path.write_text(MANIFEST.replace("agent", "pk"))
    pkctl(cluster, "apply", "-f", str(path))
    assert 'daemon set "pk" successfully rolled out' in pkctl(cluster, "rollout", "status", "ds/pk", "--timeout=90s")
    header, row = pkctl(cluster, "get", "ds", "pk").splitlines()
    assert header.split()[:6] == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE"]
    assert row.split()[:6] == ["pk", "3", "3", "3", "3", "3"]
    text = pkctl(cluster, "describe", "daemonset", "pk")
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}
    assert fields["Desired Number of Nodes Scheduled"] == "3"
    assert fields["Number of Nodes Scheduled with Available Pods"] == "3"
    assert "SuccessfulCreate" in text and "busybox:1.36" in text

    await client.patch(DaemonSet, "pk", {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "busybox:1.37"}]}}}}, "default")
    pkctl(cluster, "rollout", "status", "ds/pk", "--timeout=90s")
    history = pkctl(cluster, "rollout", "history", "ds/pk")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    assert pkctl(cluster, "rollout", "undo", "ds/pk") == "daemonset.apps/pk rolled back\n"
    pkctl(cluster, "rollout", "status", "ds/pk", "--timeout=90s")

    async def back() -> list[Pod] | None:
        pods = [p for p in (await client.list(Pod, "default", label_selector="app=pk")).items
                if p.metadata.deletion_timestamp is None]
        done = len(pods) == 3 and all(p.spec.containers[0].image == "busybox:1.36" and is_pod_ready(p) for p in pods)
        return pods if done else None

    await eventually(back, timeout=60, message="pkctl rollout undo brought the old image back")
