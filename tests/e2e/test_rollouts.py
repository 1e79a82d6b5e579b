"""Rollouts as a user drives them with the real kubectl, on a whole cluster of real processes.

`kubectl rollout status/history/undo/restart/pause/resume`, `kubectl scale` and
`kubectl set image` against Deployments whose pods run on two simulated nodes; a watch on
the pods checks the promises of each strategy at every event, not only at the end. The
cluster notices a silent node in seconds (`--node-monitor-grace-period 4`) so the stopped
kubelet scenario runs quickly.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from kube.api import Deployment, Node, Pod, ReplicaSet
from kube.client import RESTClient, load_kubeconfig
from kube.podutil import is_pod_ready
from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

NAMESPACE = "default"


CLUSTER_ARGS = ("--nodes", "2", "--runtime", "simulated", "--pod-start-delay", "0.2",
                "--node-monitor-grace-period", "4", "--node-status-update-frequency", "1")


@pytest_asyncio.fixture
async def client(cluster: Cluster) -> AsyncIterator[RESTClient]:
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as c:
        yield c


async def kubectl(cluster: Cluster, *args: str, timeout: float = 90) -> tuple[int, str, str]:
    """Run the real kubectl without blocking the event loop (watches keep reading meanwhile)."""
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(cluster.kubeconfig), *args, env=cluster.env(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def ok(cluster: Cluster, *args: str) -> str:
    code, out, err = await kubectl(cluster, *args)
    assert code == 0, f"kubectl {' '.join(args)} exited {code}: {err}{out}"
    return out


def deployment_yaml(name: str, *, replicas: int, image: str = "busybox:1.36", strategy: str = "",
                    extra_spec: str = "", pod_spec: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {NAMESPACE}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
{strategy}{extra_spec}  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{pod_spec}      containers:
      - name: app
        image: {image}
        resources: {{requests: {{cpu: 50m, memory: 16Mi}}}}
"""


async def apply(cluster: Cluster, tmp_path: Path, manifest: str) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text(manifest)
    await ok(cluster, "apply", "-f", str(path))


class PodWatch:
    """Follows one app's pods through a watch and checks `observe` after every event."""

    def __init__(self, client: RESTClient, app: str, observe: Callable[[dict[str, Pod]], None]) -> None:
        self.client, self.app, self.observe = client, app, observe
        self.pods: dict[str, Pod] = {}
        self.events = 0

    async def run(self, ready: asyncio.Event) -> None:
        listed = await self.client.list(Pod, NAMESPACE, label_selector=f"app={self.app}")
        self.pods = {p.metadata.name or "": p for p in listed.items}
        rv = listed.resource_version or "0"
        ready.set()
        while True:
            async for ev in self.client.watch(Pod, NAMESPACE, resource_version=rv,
                                              label_selector=f"app={self.app}"):
                rv = ev.resource_version or rv
                if ev.object is None:
                    continue
                name = ev.object.metadata.name or ""
                if ev.type == "DELETED":
                    self.pods.pop(name, None)
                else:
                    self.pods[name] = ev.object
                self.events += 1
                self.observe(self.pods)


async def watching(client: RESTClient, app: str, observe: Callable[[dict[str, Pod]], None],
                   tg: asyncio.TaskGroup) -> tuple[PodWatch, asyncio.Task[None]]:
    watch = PodWatch(client, app, observe)
    started = asyncio.Event()
    task = tg.create_task(watch.run(started))
    await asyncio.wait_for(started.wait(), 30)
    return watch, task


def serving(pods: dict[str, Pod]) -> list[Pod]:
    """Pods Ready and not on their way out: what would be behind a Service."""
    return [p for p in pods.values() if p.metadata.deletion_timestamp is None and is_pod_ready(p)]


def active(pods: dict[str, Pod]) -> list[Pod]:
    return [p for p in pods.values() if p.metadata.deletion_timestamp is None
            and p.status.phase not in ("Succeeded", "Failed")]


async def pods_of(client: RESTClient, app: str) -> dict[str, Pod]:
    return {p.metadata.name or "": p for p in (await client.list(Pod, NAMESPACE, label_selector=f"app={app}")).items}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def template_hash(pod: Pod) -> str:
    return (pod.metadata.labels or {}).get("pod-template-hash", "")


async def owned_replicasets(client: RESTClient, name: str) -> list[ReplicaSet]:
    d = await client.get(Deployment, name, NAMESPACE)
    return [rs for rs in (await client.list(ReplicaSet, NAMESPACE)).items
            if (ref := rs.metadata.controller_ref()) is not None and ref.uid == d.metadata.uid]


async def image_of(client: RESTClient, name: str) -> str:
    d = await client.get(Deployment, name, NAMESPACE)
    return d.spec.template.spec.containers[0].image or ""


async def test_max_unavailable_zero_never_drops_below_the_desired_ready_pods(cluster: Cluster, client: RESTClient,
                                                                             tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml(
        "steady", replicas=4, strategy="  strategy:\n    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}\n"))
    await ok(cluster, "rollout", "status", "deployment/steady", "--timeout=60s")
    lowest = [4]
    most = [0]

    def observe(pods: dict[str, Pod]) -> None:
        lowest[0] = min(lowest[0], len(serving(pods)))
        most[0] = max(most[0], len(active(pods)))

    async with asyncio.TaskGroup() as tg:
        watch, task = await watching(client, "steady", observe, tg)
        await ok(cluster, "set", "image", "deployment/steady", "app=busybox:1.37")
        out = await ok(cluster, "rollout", "status", "deployment/steady", "--timeout=90s")
        task.cancel()
    assert 'deployment "steady" successfully rolled out' in out
    assert watch.events > 8  # four pods came and four went while we watched
    assert lowest[0] >= 4, f"only {lowest[0]} Ready pods at one point during the rollout"
    assert most[0] <= 5, f"{most[0]} pods at once with maxSurge 1"
    pods = (await client.list(Pod, NAMESPACE, label_selector="app=steady")).items
    assert {p.spec.containers[0].image for p in pods if not p.metadata.deletion_timestamp} == {"busybox:1.37"}


async def test_rollout_history_undo_and_restart(cluster: Cluster, client: RESTClient, tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml("hist", replicas=2))
    await ok(cluster, "rollout", "status", "deployment/hist", "--timeout=60s")
    await ok(cluster, "set", "image", "deployment/hist", "app=busybox:1.37")
    await ok(cluster, "rollout", "status", "deployment/hist", "--timeout=60s")

    history = await ok(cluster, "rollout", "history", "deployment/hist")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    first = await ok(cluster, "rollout", "history", "deployment/hist", "--revision=1")
    assert "busybox:1.36" in first

    out = await ok(cluster, "rollout", "undo", "deployment/hist")
    assert "deployment.apps/hist rolled back" in out
    await ok(cluster, "rollout", "status", "deployment/hist", "--timeout=60s")
    assert await image_of(client, "hist") == "busybox:1.36"
    history = await ok(cluster, "rollout", "history", "deployment/hist")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]
    assert len(await owned_replicasets(client, "hist")) == 2  # the old ReplicaSet came back, no third one

    await ok(cluster, "rollout", "undo", "deployment/hist", "--to-revision=2")
    await ok(cluster, "rollout", "status", "deployment/hist", "--timeout=60s")
    assert await image_of(client, "hist") == "busybox:1.37"

    before = {rs.metadata.uid for rs in await owned_replicasets(client, "hist")}
    out = await ok(cluster, "rollout", "restart", "deployment/hist")
    assert "deployment.apps/hist restarted" in out
    await ok(cluster, "rollout", "status", "deployment/hist", "--timeout=60s")
    d = await client.get(Deployment, "hist", NAMESPACE)
    assert "kubectl.kubernetes.io/restartedAt" in (d.spec.template.metadata.annotations or {})
    replicasets = await owned_replicasets(client, "hist")
    fresh = [rs for rs in replicasets if rs.metadata.uid not in before]
    assert len(fresh) == 1 and fresh[0].spec.replicas == 2
    assert all(rs.spec.replicas == 0 for rs in replicasets if rs is not fresh[0])


async def test_kubectl_scale_and_pause_resume(cluster: Cluster, client: RESTClient, tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml("scaled", replicas=2))
    await ok(cluster, "rollout", "status", "deployment/scaled", "--timeout=60s")
    await ok(cluster, "scale", "deployment/scaled", "--replicas=5")
    await ok(cluster, "rollout", "status", "deployment/scaled", "--timeout=60s")
    table = await ok(cluster, "get", "deployment", "scaled")
    assert table.splitlines()[1].split()[1:4] == ["5/5", "5", "5"]

    await ok(cluster, "rollout", "pause", "deployment/scaled")
    await ok(cluster, "set", "image", "deployment/scaled", "app=busybox:1.37")
    await ok(cluster, "scale", "deployment/scaled", "--replicas=3")  # a paused Deployment still scales

    async def paused_and_scaled() -> bool:
        d = await client.get(Deployment, "scaled", NAMESPACE)
        return d.status.observed_generation == d.metadata.generation and d.status.replicas == 3
    await eventually(paused_and_scaled, timeout=30, message="pause and scale observed")
    assert len(await owned_replicasets(client, "scaled")) == 1  # no rollout while paused
    code, out, _ = await kubectl(cluster, "rollout", "status", "deployment/scaled", "--timeout=2s")
    assert code != 0 and "0 out of 3 new replicas have been updated" in out

    await ok(cluster, "rollout", "resume", "deployment/scaled")
    await ok(cluster, "rollout", "status", "deployment/scaled", "--timeout=60s")
    assert await image_of(client, "scaled") == "busybox:1.37"
    assert [rs.spec.replicas for rs in await owned_replicasets(client, "scaled")].count(3) == 1


async def test_progress_deadline_fails_rollout_status(cluster: Cluster, client: RESTClient, tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml("stuck", replicas=2, extra_spec="  progressDeadlineSeconds: 5\n"))
    await ok(cluster, "rollout", "status", "deployment/stuck", "--timeout=60s")
    await ok(cluster, "set", "image", "deployment/stuck", "app=registry.invalid/app:1")  # can never be pulled
    code, out, err = await kubectl(cluster, "rollout", "status", "deployment/stuck", "--timeout=60s")
    assert code == 1 and 'deployment "stuck" exceeded its progress deadline' in err, out + err
    d = await client.get(Deployment, "stuck", NAMESPACE)
    conditions = {c.type: (c.status, c.reason) for c in d.status.conditions or []}
    assert conditions["Progressing"] == ("False", "ProgressDeadlineExceeded")
    assert conditions["Available"] == ("True", "MinimumReplicasAvailable")  # the old pods still serve

    await ok(cluster, "rollout", "undo", "deployment/stuck")
    await ok(cluster, "rollout", "status", "deployment/stuck", "--timeout=60s")
    d = await client.get(Deployment, "stuck", NAMESPACE)
    assert {c.type: c.reason for c in d.status.conditions or []}["Progressing"] == "NewReplicaSetAvailable"


async def test_recreate_never_runs_old_and_new_pods_together(cluster: Cluster, client: RESTClient,
                                                             tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml("recreate", replicas=3, strategy="  strategy: {type: Recreate}\n"))
    await ok(cluster, "rollout", "status", "deployment/recreate", "--timeout=60s")
    mixed: list[set[str]] = []

    def observe(pods: dict[str, Pod]) -> None:
        # Terminating pods count: Recreate waits until the old ones are really gone.
        hashes = {template_hash(p) for p in pods.values() if p.status.phase not in ("Succeeded", "Failed")}
        if len(hashes) > 1:
            mixed.append(hashes)

    async with asyncio.TaskGroup() as tg:
        watch, task = await watching(client, "recreate", observe, tg)
        await ok(cluster, "set", "image", "deployment/recreate", "app=busybox:1.37")
        await ok(cluster, "rollout", "status", "deployment/recreate", "--timeout=90s")
        task.cancel()
    assert watch.events >= 6
    assert not mixed, f"old and new pods existed together: {mixed[:3]}"
    pods = active(await pods_of(client, "recreate"))
    assert len(pods) == 3 and {p.spec.containers[0].image for p in pods} == {"busybox:1.37"}


async def test_sigkill_of_the_controller_manager_mid_rollout_converges(cluster: Cluster, client: RESTClient,
                                                                      tmp_path: Path) -> None:
    # minReadySeconds holds each step of the rollout open for a while, so it cannot be over
    # before the controller-manager is killed in it however fast the simulated nodes are.
    await apply(cluster, tmp_path, deployment_yaml(
        "killed", replicas=10, strategy="  strategy:\n    rollingUpdate: {maxSurge: 2, maxUnavailable: 1}\n",
        extra_spec="  minReadySeconds: 2\n"))
    await ok(cluster, "rollout", "status", "deployment/killed", "--timeout=60s")
    most, last_size = [0], [0]

    def observe(pods: dict[str, Pod]) -> None:
        most[0] = max(most[0], len(active(pods)))

    async with asyncio.TaskGroup() as tg:
        _, task = await watching(client, "killed", observe, tg)
        await ok(cluster, "set", "image", "deployment/killed", "app=busybox:1.37")
        killed_pid, kills = None, 0
        for _ in range(2):  # twice, while both ReplicaSets have pods, unless the rollout is over by then

            async def mid_rollout(killed_pid: int | None = killed_pid) -> tuple[str, int] | None:
                """("kill", pid) while old and new are both live under a running controller-manager; ("done", 0)."""
                pid = cluster.pid_of("controller-manager")
                if pid == killed_pid or not alive(pid):
                    return None
                replicasets = await owned_replicasets(client, "killed")
                new = [rs for rs in replicasets if rs.spec.template.spec.containers[0].image == "busybox:1.37"]
                if new and new[0].spec.replicas == 10 and all(rs.spec.replicas == 0 for rs in replicasets
                                                              if rs is not new[0]):
                    return "done", 0
                if len(replicasets) != 2 or not all(rs.spec.replicas for rs in replicasets) or not new:
                    return None
                return ("kill", pid) if (new[0].spec.replicas or 0) > last_size[0] else None
            what, pid = await eventually(mid_rollout, timeout=60, interval=0.02, message="both ReplicaSets live")
            if what == "done":
                break
            killed_pid = pid
            last_size[0] = max(rs.spec.replicas or 0 for rs in await owned_replicasets(client, "killed")
                               if rs.spec.template.spec.containers[0].image == "busybox:1.37")
            os.kill(killed_pid, signal.SIGKILL)
            kills += 1
        assert kills >= 1, "the rollout finished before the controller-manager could be killed in it"
        await ok(cluster, "rollout", "status", "deployment/killed", "--timeout=120s")
        task.cancel()
    replicasets = await owned_replicasets(client, "killed")
    assert len(replicasets) == 2 and sorted(r for rs in replicasets if (r := rs.spec.replicas) is not None) == [0, 10]

    async def settled() -> list[Pod] | None:
        pods = active(await pods_of(client, "killed"))
        return pods if len(pods) == 10 else None
    pods = await eventually(settled, timeout=30, message="exactly 10 pods")
    assert {p.spec.containers[0].image for p in pods} == {"busybox:1.37"}
    assert most[0] <= 12, f"{most[0]} pods at once for 10 replicas with maxSurge 2"


TOLERATE_BRIEFLY = """\
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
"""


async def test_stopped_kubelet_node_is_tainted_and_its_pods_move(cluster: Cluster, client: RESTClient,
                                                                 tmp_path: Path) -> None:
    await apply(cluster, tmp_path, deployment_yaml("moving", replicas=4, pod_spec=TOLERATE_BRIEFLY))
    await ok(cluster, "rollout", "status", "deployment/moving", "--timeout=60s")
    pods = (await client.list(Pod, NAMESPACE, label_selector="app=moving")).items
    victim = max(("node-1", "node-2"), key=lambda n: sum(p.spec.node_name == n for p in pods))
    survivor = "node-2" if victim == "node-1" else "node-1"
    stranded = {p.metadata.name for p in pods if p.spec.node_name == victim}
    pid = cluster.pid_of(f"kubelet-{victim}")
    os.kill(pid, signal.SIGSTOP)
    try:
        async def unreachable() -> Node | None:
            node = await client.get(Node, victim, None)
            ready = next((c for c in node.status.conditions or [] if c.type == "Ready"), None)
            taints = {(t.key, t.effect) for t in node.spec.taints or []}
            ok_ = ready is not None and ready.status == "Unknown" and \
                ("node.kubernetes.io/unreachable", "NoExecute") in taints
            return node if ok_ else None
        await eventually(unreachable, timeout=30, message=f"{victim} Unknown and tainted")
        code, out, _ = await kubectl(cluster, "get", "node", victim)
        assert code == 0 and "NotReady" in out

        async def moved() -> list[Pod] | None:
            current = (await client.list(Pod, NAMESPACE, label_selector="app=moving")).items
            evicted = {p.metadata.name for p in current if p.metadata.deletion_timestamp is not None}
            running = [p for p in current if p.metadata.deletion_timestamp is None and p.spec.node_name == survivor
                       and p.status.phase == "Running" and is_pod_ready(p)]
            return running if stranded <= evicted and len(running) == 4 else None
        await eventually(moved, timeout=60, message=f"pods evicted from {victim} and running on {survivor}")
        await ok(cluster, "rollout", "status", "deployment/moving", "--timeout=30s")
    finally:
        os.kill(pid, signal.SIGCONT)

    async def recovered() -> bool:
        node = await client.get(Node, victim, None)
        ready = next((c for c in node.status.conditions or [] if c.type == "Ready"), None)
        current = (await client.list(Pod, NAMESPACE, label_selector="app=moving")).items
        return ready is not None and ready.status == "True" and not node.spec.taints \
            and not ({p.metadata.name for p in current} & stranded)
    await eventually(recovered, timeout=60, message=f"{victim} Ready again, its evicted pods gone")
