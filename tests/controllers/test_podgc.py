"""The pod garbage collector as a real controller-manager (short period and quarantine) against a
real API server: pods bound to a deleted node are failed and deleted once the node stays
missing, pods of an existing node are kept, and terminated pods beyond the threshold go."""

from __future__ import annotations

import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from kube.api import Namespace, Node, Pod
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def manager(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    proc = api.controller_manager("--pod-gc-period", "0.5", "--pod-gc-orphan-quarantine", "2",
                                  "--terminated-pod-gc-threshold", "2",
                                  log_path=tmp_path_factory.mktemp("cm") / "controller-manager.log").start()
    try:
        yield proc
    finally:
        code = proc.stop()
        if code not in (0, None, -signal.SIGKILL):
            sys.stderr.write(f"--- controller-manager log ---\n{proc.log()[-20000:]}\n")


class Cluster:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"gc-{uuid.uuid4().hex[:6]}"

    async def node(self, name: str) -> None:
        await self.client.create(Node.model_validate({"metadata": {"name": name}}))

    async def pod(self, name: str, node: str, *, phase: str = "Running") -> None:
        await self.client.create(Pod.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": "busybox:1.36"}]}}))
        await self.client.patch(Pod, name, {"status": {"phase": phase}}, self.namespace, subresource="status")

    async def names(self) -> set[str]:
        return {str(p.metadata.name) for p in (await self.client.list(Pod, self.namespace)).items}


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness, manager: Process) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        yield c


async def test_pods_of_a_deleted_node_are_deleted_after_the_quarantine(cluster: Cluster) -> None:
    doomed, kept = f"gone-{uuid.uuid4().hex[:6]}", f"kept-{uuid.uuid4().hex[:6]}"
    await cluster.node(doomed)
    await cluster.node(kept)
    await cluster.pod("orphan", doomed)
    await cluster.pod("safe", kept)
    await cluster.client.delete(Node, doomed)
    seen: list[Pod] = []

    async def failed_first() -> bool:
        try:
            pod = await cluster.client.get(Pod, "orphan", cluster.namespace)
        except NotFound:
            return True
        if pod.status.phase == "Failed":
            seen.append(pod)
        return False
    await eventually(failed_first, timeout=30, message="the orphaned pod deleted")
    assert await cluster.names() == {"safe"}
    if seen:
        cond = seen[-1].status.condition("DisruptionTarget")
        assert cond is not None and cond.reason == "DeletionByPodGC"


async def test_terminated_pods_beyond_the_threshold_are_deleted(cluster: Cluster) -> None:
    node = f"n-{uuid.uuid4().hex[:6]}"
    await cluster.node(node)
    for i in range(4):
        await cluster.pod(f"done-{i}", node, phase="Succeeded")
    await cluster.pod("running", node)

    async def trimmed() -> bool:
        names = await cluster.names()
        return len(names) == 3 and "running" in names
    await eventually(trimmed, timeout=30, message="two terminated pods kept, the running one untouched")
