"""Ephemeral containers on the simulated runtime: added to a running pod, each starts once in the
pod's sandbox, is reported in ephemeralContainerStatuses and is never restarted."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import ContainerStatus, Namespace, Pod
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.config import FIELD_MANAGER, KubeletConfig
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.kubelet import Kubelet

pytestmark = pytest.mark.timeout(120)

CIDR = "10.244.8.0/24"


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as c:
        yield c


@pytest_asyncio.fixture
async def ns(admin: RESTClient, api: ApiServerHarness) -> AsyncIterator[str]:
    """A namespace whose pods on node-1 a simulated kubelet runs."""
    name = f"eph-{uuid.uuid4().hex[:6]}"
    await admin.create(Namespace.model_validate({"metadata": {"name": name}}))
    config = KubeletConfig(node_name="node-1", pod_cidr=CIDR, node_status_update_frequency=1.0,
                           relist_interval=0.2, housekeeping_interval=0.5)
    async with api.client("node-1", field_manager=FIELD_MANAGER) as client:
        kubelet = Kubelet(config, client, SimulatedRuntime(pod_cidr=CIDR), runtime_name=RUNTIME_NAME,
                          runtime_version=RUNTIME_VERSION, kubelet_port=10250)
        task = asyncio.create_task(kubelet.run())
        try:
            yield name
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def running_pod(admin: RESTClient, ns: str, name: str) -> Pod:
    await admin.create(Pod.model_validate({"metadata": {"name": name, "namespace": ns}, "spec": {
        "nodeName": "node-1", "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "busybox"}]}}))

    async def running() -> Pod | None:
        p = await admin.get(Pod, name, ns)
        return p if p.status.phase == "Running" and p.is_ready() else None
    return await eventually(running, timeout=20, message=f"{name} Running")


async def add(admin: RESTClient, ns: str, pod: str, **container: Any) -> None:
    await admin.patch(Pod, pod, {"spec": {"ephemeralContainers": [{"image": "busybox", **container}]}}, ns,
                      subresource="ephemeralcontainers", patch_type="strategic")


async def ephemeral_status(admin: RESTClient, ns: str, pod: str, container: str, state: str) -> ContainerStatus:
    async def reached() -> ContainerStatus | None:
        p = await admin.get(Pod, pod, ns)
        for cs in p.status.ephemeral_container_statuses or []:
            if cs.name == container and cs.state is not None and getattr(cs.state, state) is not None:
                return cs
        return None
    return await eventually(reached, timeout=20, message=f"{container} {state}")


async def test_an_added_container_runs_beside_its_target(admin: RESTClient, ns: str) -> None:
    await running_pod(admin, ns, "web")
    await add(admin, ns, "web", name="debugger", targetContainerName="app", stdin=True, tty=True)
    cs = await ephemeral_status(admin, ns, "web", "debugger", "running")
    assert cs.ready is False and cs.restart_count == 0 and cs.image == "busybox"
    assert cs.container_id and cs.container_id.startswith("simulated://") and cs.image_id
    pod = await admin.get(Pod, "web", ns)
    assert pod.status.phase == "Running" and pod.is_ready()
    assert [c.name for c in pod.status.container_statuses or []] == ["app"]


async def test_an_exited_container_is_never_restarted(admin: RESTClient, ns: str) -> None:
    await running_pod(admin, ns, "job")
    await add(admin, ns, "job", name="once", command=["sh", "-c", "exit 3"])
    done = await ephemeral_status(admin, ns, "job", "once", "terminated")
    assert done.state is not None and done.state.terminated is not None
    assert done.state.terminated.exit_code == 3 and done.state.terminated.reason == "Error"
    # Another addition makes the kubelet sync the pod again; the exited one stays as it was.
    await add(admin, ns, "job", name="later", command=["sh", "-c", "sleep 3600"])
    await ephemeral_status(admin, ns, "job", "later", "running")
    again = await ephemeral_status(admin, ns, "job", "once", "terminated")
    assert again.container_id == done.container_id and again.restart_count == 0
    pod = await admin.get(Pod, "job", ns)
    assert pod.status.phase == "Running"


async def test_a_finished_pod_keeps_reporting_its_ephemeral_containers(admin: RESTClient, ns: str) -> None:
    await admin.create(Pod.model_validate({"metadata": {"name": "short", "namespace": ns}, "spec": {
        "nodeName": "node-1", "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 4; exit 0"]}]}}))
    await add(admin, ns, "short", name="debugger", targetContainerName="app", command=["sh", "-c", "sleep 3600"])
    await ephemeral_status(admin, ns, "short", "debugger", "running")

    async def succeeded() -> Pod | None:
        p = await admin.get(Pod, "short", ns)
        return p if p.status.phase == "Succeeded" else None
    await eventually(succeeded, timeout=30, message="short Succeeded")
    stopped = await ephemeral_status(admin, ns, "short", "debugger", "terminated")
    assert stopped.restart_count == 0
