"""The kubelet against a real API server: it registers its Node and Lease, runs the pods bound to
it on the simulated runtime, reports their status, restarts and back-offs as Kubernetes does,
and finishes graceful deletes."""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Container, Lease, Namespace, Node, Pod, Probe
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.config import FIELD_MANAGER, KubeletConfig
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.kubelet import Kubelet
from tests.kubelet.running import running_kubelet

pytestmark = pytest.mark.timeout(120)

CIDR = "10.244.7.0/24"


@pytest_asyncio.fixture
async def kubelet(api: ApiServerHarness, tmp_path: Path) -> AsyncIterator[tuple[Kubelet, SimulatedRuntime]]:
    async with running_kubelet(api, tmp_path, node="node-1", pod_cidr=CIDR,
                               node_status_update_frequency=1.0) as running:
        yield running


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as c:
        yield c


@pytest_asyncio.fixture
async def ns(admin: RESTClient) -> str:
    name = f"kl-{uuid.uuid4().hex[:6]}"
    await admin.create(Namespace.model_validate({"metadata": {"name": name}}))
    return name


def pod(ns: str, name: str, *, command: list[str] | None = None, image: str = "busybox",
        restart: str = "Always") -> Pod:
    container: dict[str, Any] = {"name": "main", "image": image}
    if command:
        container["command"] = command
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns},
                               "spec": {"nodeName": "node-1", "restartPolicy": restart,
                                        "terminationGracePeriodSeconds": 5, "containers": [container]}})


async def test_registers_node_and_lease(kubelet: Any, admin: RESTClient) -> None:
    async def ready() -> Node | None:
        try:
            node = await admin.get(Node, "node-1")
        except NotFound:
            return None
        return node if node.is_ready() else None

    node = await eventually(ready, timeout=20, message="node-1 Ready")
    assert node.spec.pod_cidr == CIDR
    assert node.metadata.labels and node.metadata.labels["kubernetes.io/hostname"] == "node-1"
    assert node.status.capacity and node.status.capacity["pods"] == "110"
    assert node.to_dict()["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == 10250

    async def renewed_twice() -> bool:
        try:
            first = await admin.get(Lease, "node-1", "kube-node-lease")
        except NotFound:
            return False
        await asyncio.sleep(1.2)
        second = await admin.get(Lease, "node-1", "kube-node-lease")
        return second.spec.holder_identity == "node-1" and second.spec.renew_time != first.spec.renew_time

    await eventually(renewed_twice, timeout=20, message="the node Lease is renewed")


async def test_runs_bound_pod_and_reports_status(kubelet: Any, admin: RESTClient, ns: str) -> None:
    await admin.create(pod(ns, "web"))

    async def running() -> Pod | None:
        p = await admin.get(Pod, "web", ns)
        return p if p.status.phase == "Running" and p.is_ready() else None

    p = await eventually(running, timeout=20, message="pod Running and Ready")
    assert p.status.pod_ip is not None
    assert ipaddress.ip_address(p.status.pod_ip) in ipaddress.ip_network(CIDR)
    assert p.status.host_ip == "127.0.0.1"
    (cs,) = p.status.container_statuses or []
    assert cs.name == "main" and cs.ready and cs.state and cs.state.running
    assert cs.container_id and cs.container_id.startswith("simulated://")
    assert p.status.start_time


async def test_never_restarted_pod_fails_with_exit_code(kubelet: Any, admin: RESTClient, ns: str) -> None:
    await admin.create(pod(ns, "job", command=["sh", "-c", "exit 3"], restart="Never"))

    async def failed() -> Pod | None:
        p = await admin.get(Pod, "job", ns)
        return p if p.status.phase == "Failed" else None

    p = await eventually(failed, timeout=20, message="pod Failed")
    (cs,) = p.status.container_statuses or []
    assert cs.state and cs.state.terminated and cs.state.terminated.exit_code == 3
    assert cs.state.terminated.reason == "Error"


async def test_crashing_container_is_restarted_with_back_off(kubelet: Any, admin: RESTClient, ns: str) -> None:
    await admin.create(pod(ns, "crash", command=["sh", "-c", "exit 1"]))

    async def backing_off() -> Pod | None:
        p = await admin.get(Pod, "crash", ns)
        cs = p.status.container_statuses[0] if p.status.container_statuses else None
        if cs and cs.state and cs.state.waiting and cs.state.waiting.reason == "CrashLoopBackOff":
            return p
        return None

    p = await eventually(backing_off, timeout=20, message="CrashLoopBackOff")
    (cs,) = p.status.container_statuses or []
    assert cs.last_state and cs.last_state.terminated and cs.last_state.terminated.exit_code == 1
    assert p.status.phase == "Running"  # restartPolicy Always: it will be restarted


async def test_image_pull_failure_is_reported(kubelet: Any, admin: RESTClient, ns: str) -> None:
    await admin.create(pod(ns, "badimg", image="registry.invalid/app:1"))

    async def waiting() -> str | None:
        p = await admin.get(Pod, "badimg", ns)
        cs = p.status.container_statuses[0] if p.status.container_statuses else None
        reason = cs.state.waiting.reason if cs and cs.state and cs.state.waiting else None
        return reason if reason in ("ErrImagePull", "ImagePullBackOff") else None

    await eventually(waiting, timeout=20, message="ErrImagePull")
    assert (await admin.get(Pod, "badimg", ns)).status.phase == "Pending"


async def test_graceful_delete_is_finished_by_the_kubelet(kubelet: Any, admin: RESTClient, ns: str) -> None:
    _, runtime = kubelet
    created = await admin.create(pod(ns, "bye"))
    await eventually(lambda: _phase(admin, ns, "bye", "Running"), timeout=20, message="pod Running")
    assert await runtime.list_pod_sandbox(labels={"io.kubernetes.pod.uid": str(created.metadata.uid)})
    await admin.delete(Pod, "bye", ns)
    pending = await admin.get(Pod, "bye", ns)
    assert pending.metadata.deletion_timestamp  # bound: the API server waits for the kubelet

    async def gone() -> bool:
        try:
            await admin.get(Pod, "bye", ns)
        except NotFound:
            return True
        return False

    await eventually(gone, timeout=20, message="pod removed by the kubelet")
    assert not await runtime.list_pod_sandbox(labels={"io.kubernetes.pod.uid": str(created.metadata.uid)})


async def _phase(admin: RESTClient, ns: str, name: str, phase: str) -> bool:
    return (await admin.get(Pod, name, ns)).status.phase == phase


def test_process_exits_promptly_on_sigterm(api: ApiServerHarness, tmp_path: Path) -> None:
    with api.component("kubelet", "--node-name", "node-2", "--runtime", "simulated", "--pod-cidr", "10.244.8.0/24",
                       identity="node-2", log_path=tmp_path / "kubelet.log") as proc:
        async def registered() -> bool:
            async with api.client("admin") as c:
                try:
                    return (await c.get(Node, "node-2")).is_ready()
                except NotFound:
                    return False

        asyncio.run(eventually(registered, timeout=30, message="node-2 registered"))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0, proc.log()


def test_bad_flags_are_reported_without_traceback() -> None:
    out = subprocess.run([sys.executable, "-m", "kubelet", "--node-name", "n", "--node-capacity", "cpu"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "--node-capacity: 'cpu' is not NAME=QUANTITY" in out.stderr and "Traceback" not in out.stderr


async def test_hollow_nodes_share_one_process(api: ApiServerHarness, admin: RESTClient, ns: str,
                                              tmp_path: Path) -> None:
    proc = api.component("kubelet", "--count", "3", "--node-name-prefix", "hollow-", "--node-labels",
                         "topology.kubernetes.io/zone=z1", "--register-with-taints", "hollow=true:NoSchedule",
                         "--node-status-update-frequency", "1", identity="admin",
                         log_path=tmp_path / "hollow.log").start()
    try:
        async def all_ready() -> list[Node] | None:
            nodes = [n for n in (await admin.list(Node)).items if (n.metadata.name or "").startswith("hollow-")]
            return nodes if len(nodes) == 3 and all(n.is_ready() for n in nodes) else None

        nodes = await eventually(all_ready, timeout=30, message="three hollow nodes Ready")
        assert sorted(n.metadata.name or "" for n in nodes) == ["hollow-1", "hollow-2", "hollow-3"]
        assert len({n.spec.pod_cidr for n in nodes}) == 3
        assert all((n.metadata.labels or {})["topology.kubernetes.io/zone"] == "z1" for n in nodes)
        assert all([(t.key, t.effect) for t in n.spec.taints or []] == [("hollow", "NoSchedule")] for n in nodes)

        # A pod bound to one hollow node is run by that node, and only by it.
        body = pod(ns, "on-two")
        body.spec.node_name = "hollow-2"
        await admin.create(body)
        await eventually(lambda: _phase(admin, ns, "on-two", "Running"), timeout=30, message="pod Running")
        running = await admin.get(Pod, "on-two", ns)
        cidr = next(n.spec.pod_cidr for n in nodes if n.metadata.name == "hollow-2")
        assert running.status.pod_ip is not None and cidr is not None
        assert ipaddress.ip_address(running.status.pod_ip) in ipaddress.ip_network(cidr)  # hollow-2's runtime
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, proc.log(3000)
    finally:
        proc.stop()
        for name in ("hollow-1", "hollow-2", "hollow-3"):
            try:
                await admin.delete(Node, name)
            except NotFound:
                pass


async def test_probes_drive_readiness_and_restarts(kubelet: Any, admin: RESTClient, ns: str) -> None:
    body = pod(ns, "probed")
    body.spec.node_name = "node-1"
    body.spec.containers[0].readiness_probe = Probe.model_validate({"exec": {"command": ["sh", "-c", "exit 1"]},
                                                                    "periodSeconds": 1, "failureThreshold": 1})
    await admin.create(body)

    async def running_not_ready() -> bool:
        p = await admin.get(Pod, "probed", ns)
        statuses = p.status.container_statuses or []
        return p.status.phase == "Running" and bool(statuses) and statuses[0].ready is False \
            and (ready := p.status.condition("Ready")) is not None and ready.status == "False"
    await eventually(running_not_ready, timeout=30, message="Running but not Ready")

    live = pod(ns, "unlive")
    live.spec.node_name = "node-1"
    live.spec.containers[0].liveness_probe = Probe.model_validate({"exec": {"command": ["false"]},
                                                                   "periodSeconds": 1, "failureThreshold": 1})
    await admin.create(live)

    async def restarted() -> bool:
        p = await admin.get(Pod, "unlive", ns)
        return any((s.restart_count or 0) >= 1 for s in p.status.container_statuses or [])
    await eventually(restarted, timeout=40, message="restarted after failing its liveness probe")


async def test_init_containers_run_first_in_order(kubelet: Any, admin: RESTClient, ns: str) -> None:
    body = pod(ns, "inits", command=["sh", "-c", "sleep 600"])
    body.spec.init_containers = [
        Container(name="first", image="busybox", command=["sh", "-c", "sleep 1; exit 0"]),
        Container(name="second", image="busybox", command=["sh", "-c", "exit 0"])]
    await admin.create(body)

    async def pending_while_initializing() -> bool:
        p = await admin.get(Pod, "inits", ns)
        cond = p.status.condition("Initialized")
        return p.status.phase == "Pending" and cond is not None and cond.status == "False"
    await eventually(pending_while_initializing, timeout=20, message="Pending and not Initialized")

    async def running() -> Pod | None:
        p = await admin.get(Pod, "inits", ns)
        return p if p.status.phase == "Running" else None
    p = await eventually(running, timeout=30, message="app container Running after the inits")
    raw = p.to_dict()["status"]
    first, second = (s["state"]["terminated"] for s in raw["initContainerStatuses"])
    app_started = raw["containerStatuses"][0]["state"]["running"]["startedAt"]
    assert (first["exitCode"], second["exitCode"]) == (0, 0)
    assert first["finishedAt"] <= second["startedAt"] <= app_started
    assert p.status.condition("Initialized").status == "True"  # type: ignore[union-attr]

    bad = pod(ns, "bad-init", command=["sh", "-c", "sleep 600"], restart="Never")
    bad.spec.init_containers = [Container(name="fails", image="busybox", command=["sh", "-c", "exit 2"])]
    await admin.create(bad)
    await eventually(lambda: _phase(admin, ns, "bad-init", "Failed"), timeout=30, message="init failure fails pod")
    failed = await admin.get(Pod, "bad-init", ns)
    statuses = failed.status.container_statuses
    assert not statuses or (statuses[0].state is not None and statuses[0].state.running is None)


async def test_a_deleted_node_is_not_registered_again(api: ApiServerHarness, admin: RESTClient) -> None:
    config = KubeletConfig(node_name="node-1", pod_cidr=CIDR, node_status_update_frequency=0.2,
                           node_status_report_frequency=0.2, relist_interval=0.2, housekeeping_interval=0.5)
    runtime = SimulatedRuntime(pod_cidr=CIDR)
    async with api.client("node-1", field_manager=FIELD_MANAGER) as client:
        k = Kubelet(config, client, runtime, runtime_name=RUNTIME_NAME, runtime_version=RUNTIME_VERSION,
                    kubelet_port=10250)
        try:
            before = (await admin.get(Lease, "node-1", "kube-node-lease")).spec.renew_time
        except NotFound:
            before = None
        task = asyncio.create_task(k.run())
        try:
            async def heartbeating() -> bool:
                """Registration is over once the heartbeat loop renews the Lease."""
                try:
                    lease = await admin.get(Lease, "node-1", "kube-node-lease")
                    return lease.spec.renew_time != before and (await admin.get(Node, "node-1")).is_ready()
                except NotFound:
                    return False
            await eventually(heartbeating, timeout=20, message="node-1 registered and heartbeating")
            await admin.delete(Node, "node-1")
            # Many status reports later (every 0.2s) the Node is still gone.
            for _ in range(15):
                await asyncio.sleep(0.2)
                with pytest.raises(NotFound):
                    await admin.get(Node, "node-1")
            assert not task.done()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
