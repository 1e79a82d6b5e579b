"""The taint eviction controller as a real controller-manager against a real API server: pods on
a node with a NoExecute taint (any taint, here one a user adds) leave at once unless they
tolerate it, after tolerationSeconds when limited, and never when tolerated without limit."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Event, Namespace, Node, Pod
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process
from kube.timeutil import now_rfc3339

pytestmark = pytest.mark.timeout(180)

TAINT = {"key": "example.com/maintenance", "value": "yes", "effect": "NoExecute"}


class Cluster:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"te-{uuid.uuid4().hex[:6]}"
        self.node = f"te-node-{uuid.uuid4().hex[:6]}"

    async def pod(self, name: str, *tolerations: dict[str, Any]) -> None:
        await self.client.create(Pod.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"nodeName": self.node, "tolerations": list(tolerations),
                     "containers": [{"name": "app", "image": "busybox:1.36"}]}}))

    async def exists(self, name: str) -> bool:
        try:
            pod = await self.client.get(Pod, name, self.namespace)
        except NotFound:
            return False
        return pod.metadata.deletion_timestamp is None

    async def taint(self) -> None:
        await self.client.patch(Node, self.node, {"spec": {"taints": [{**TAINT, "timeAdded": now_rfc3339()}]}})


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness, manager: Process) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        await client.create(Node.model_validate({"metadata": {"name": c.node}}))
        yield c


async def test_no_execute_taints_evict_pods_that_do_not_tolerate_them(cluster: Cluster) -> None:
    await cluster.pod("intolerant")
    await cluster.pod("forever", {"key": TAINT["key"], "operator": "Exists", "effect": "NoExecute"})
    await cluster.pod("briefly", {**TAINT, "operator": "Equal", "tolerationSeconds": 8})
    await cluster.pod("other-value", {**TAINT, "operator": "Equal", "value": "no"})
    started = time.monotonic()
    await cluster.taint()

    async def intolerant_gone() -> bool:
        return not await cluster.exists("intolerant") and not await cluster.exists("other-value")
    await eventually(intolerant_gone, timeout=20, message="pods not tolerating the taint evicted")
    if time.monotonic() - started < 7:  # (the controller-manager may have been starting up meanwhile)
        assert await cluster.exists("briefly"), "a pod tolerating the taint for 8s stays that long"

    async def briefly_gone() -> bool:
        return not await cluster.exists("briefly")
    await eventually(briefly_gone, timeout=20, message="the pod evicted once its tolerationSeconds ran out")
    assert time.monotonic() - started >= 6.9  # timeAdded has whole seconds
    assert await cluster.exists("forever")
    events = await cluster.client.list(Event, cluster.namespace)
    assert any(e.reason == "TaintManagerEviction" and e.involved_object.name == "intolerant"
               and e.message == f"Marking for deletion Pod {cluster.namespace}/intolerant" for e in events.items)
