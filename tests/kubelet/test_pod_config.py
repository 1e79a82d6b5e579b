"""The kubelet against a real API server gives containers what their pods consume: a missing
ConfigMap holds the container in CreateContainerConfigError until it appears, and the values
reach the container's environment."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import ConfigMap, Event, Namespace, Pod
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.config import FIELD_MANAGER, KubeletConfig
from kubelet.cri.simulated import RUNTIME_NAME, RUNTIME_VERSION, SimulatedRuntime
from kubelet.kubelet import Kubelet

pytestmark = pytest.mark.timeout(120)

CIDR = "10.244.9.0/24"
NODE = "node-2"


@pytest_asyncio.fixture
async def kubelet(api: ApiServerHarness) -> AsyncIterator[tuple[Kubelet, SimulatedRuntime]]:
    config = KubeletConfig(node_name=NODE, pod_cidr=CIDR, node_status_update_frequency=1.0,
                           relist_interval=0.2, housekeeping_interval=0.5)
    runtime = SimulatedRuntime(pod_cidr=CIDR)
    async with api.client(NODE, field_manager=FIELD_MANAGER) as client:
        k = Kubelet(config, client, runtime, runtime_name=RUNTIME_NAME, runtime_version=RUNTIME_VERSION,
                    kubelet_port=10250)
        task = asyncio.create_task(k.run())
        try:
            yield k, runtime
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as c:
        yield c


@pytest_asyncio.fixture
async def ns(admin: RESTClient) -> str:
    name = f"cfg-{uuid.uuid4().hex[:6]}"
    await admin.create(Namespace.model_validate({"metadata": {"name": name}}))
    return name


def _pod(ns: str, name: str, container: dict[str, Any]) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns},
                               "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 0,
                                        "containers": [{"name": "main", "image": "busybox",
                                                        "command": ["sleep", "3600"], **container}]}})


def _waiting(pod: Pod) -> tuple[str | None, str | None]:
    for cs in pod.status.container_statuses or [] if pod.status else []:
        if cs.state is not None and cs.state.waiting is not None:
            return cs.state.waiting.reason, cs.state.waiting.message
    return None, None


async def test_missing_config_map_holds_the_container_until_it_exists(
        kubelet: tuple[Kubelet, SimulatedRuntime], admin: RESTClient, ns: str) -> None:
    _, runtime = kubelet
    await admin.create(_pod(ns, "p", {"env": [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "mode"}}},
        {"name": "GREETING", "value": "mode=$(MODE)"}]}))

    async def config_error() -> bool:
        return _waiting(await admin.get(Pod, "p", ns)) == ("CreateContainerConfigError",
                                                           'configmap "app" not found')
    await eventually(config_error, timeout=15)

    async def failed_event() -> bool:
        events = await admin.list(Event, ns)
        return any(e.reason == "Failed" and e.message == 'Error: configmap "app" not found' for e in events.items)
    await eventually(failed_event, timeout=15)

    await admin.create(ConfigMap.model_validate({"metadata": {"name": "app", "namespace": ns},
                                                 "data": {"mode": "fast"}}))

    async def running() -> Pod | None:
        pod = await admin.get(Pod, "p", ns)
        return pod if pod.status is not None and pod.status.phase == "Running" else None
    pod = await eventually(running, timeout=20)
    cid = (pod.status.container_statuses or [])[0].container_id if pod.status else None
    assert cid is not None
    env = runtime.container_config(cid.split("://", 1)[-1]).env
    assert env["MODE"] == "fast" and env["GREETING"] == "mode=fast"
