"""The VolumeBinding plugin and the volume PreBind step in a real scheduler process against a
real API server (the test itself plays the PV controller): pods follow their volumes' node
affinity, unbound Immediate and missing claims keep a pod unschedulable with upstream's
reasons, and a WaitForFirstConsumer claim gets the chosen node before the pod is bound,
which waits until the claim is Bound."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def scheduler(api: ApiServerHarness, tmp_path: Path) -> Iterator[Process]:
    proc = api.component("scheduler", "--log-level", "DEBUG", identity="scheduler",
                         log_path=tmp_path / "scheduler.log").start()
    try:
        yield proc
    finally:
        proc.stop()
        sys.stderr.write(f"--- scheduler log ---\n{proc.log()[-20000:]}\n")


class Cluster:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.suffix = uuid.uuid4().hex[:6]
        self.namespace = f"vb-{self.suffix}"
        self.nodes: list[str] = []

    async def add_node(self, name: str, **annotations: str) -> str:
        full = f"{name}-{self.suffix}"
        node = await self.client.create(Node.model_validate({"metadata": {
            "name": full, "labels": {"test": self.suffix, "kubernetes.io/hostname": full},
            "annotations": annotations}}))
        amounts = {"cpu": "2", "memory": "2Gi", "pods": "10"}
        node.status = node.status.model_validate({"capacity": amounts, "allocatable": amounts, "conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady"}]})
        await self.client.update_status(node)
        self.nodes.append(full)
        return full

    async def claim(self, name: str, storage_class: str) -> None:
        await self.client.create(PersistentVolumeClaim.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": "1Gi"}}}}))

    async def bind(self, claim: str, volume: str, storage_class: str, node: str) -> None:
        """What the PV controller does: a volume pinned to `node`, bound both ways."""
        current = await self.client.get(PersistentVolumeClaim, claim, self.namespace)
        await self.client.create(PersistentVolume.model_validate({"metadata": {"name": volume}, "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
            "hostPath": {"path": f"/tmp/{volume}"},
            "claimRef": {"namespace": self.namespace, "name": claim, "uid": current.metadata.uid},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}}}))
        await self.client.patch(PersistentVolumeClaim, claim, {"spec": {"volumeName": volume}}, self.namespace)
        await self.client.patch(PersistentVolumeClaim, claim, {"status": {"phase": "Bound"}}, self.namespace,
                                subresource="status")

    async def pod(self, name: str, *claims: str) -> None:
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "image": "busybox:1.36"}], "nodeSelector": {"test": self.suffix},
            "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}
        await self.client.create(Pod.model_validate({"metadata": {"name": name, "namespace": self.namespace},
                                                     "spec": spec}))

    async def node_of(self, name: str) -> str | None:
        return (await self.client.get(Pod, name, self.namespace)).spec.node_name

    async def unschedulable_message(self, name: str) -> str | None:
        cond = (await self.client.get(Pod, name, self.namespace)).status.condition("PodScheduled")
        return cond.message if cond is not None and cond.status == "False" else None

    async def cleanup(self) -> None:
        for pod in (await self.client.list(Pod, self.namespace)).items:
            try:
                await self.client.delete(Pod, str(pod.metadata.name), self.namespace, grace_period_seconds=0)
            except NotFound:
                pass
        for node in self.nodes:
            try:
                await self.client.delete(Node, node)
            except NotFound:
                pass


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        try:
            yield c
        finally:
            await c.cleanup()


async def test_pod_follows_its_bound_volume_node_affinity(cluster: Cluster, scheduler: Process) -> None:
    await cluster.add_node("a")
    b = await cluster.add_node("b")
    cls = f"static-{cluster.suffix}"
    await cluster.claim("data", cls)
    await cluster.bind("data", f"pv-{cluster.suffix}", cls, b)
    await cluster.pod("user", "data")
    assert await eventually(lambda: cluster.node_of("user"), timeout=30, message="the pod bound") == b


async def test_unbound_immediate_and_missing_claims_keep_the_pod_pending(cluster: Cluster,
                                                                         scheduler: Process) -> None:
    await cluster.add_node("a")
    cls = f"immediate-{cluster.suffix}"
    await cluster.client.create(StorageClass.model_validate({"metadata": {"name": cls},
                                                             "provisioner": "example.com/external"}))
    await cluster.claim("unbound", cls)
    await cluster.pod("waits", "unbound")
    await cluster.pod("missing", "nope")
    message = await eventually(lambda: cluster.unschedulable_message("waits"), timeout=30,
                               message="PodScheduled=False")
    assert "pod has unbound immediate PersistentVolumeClaims" in message
    missing = await eventually(lambda: cluster.unschedulable_message("missing"), timeout=30,
                               message="PodScheduled=False")
    assert 'persistentvolumeclaim "nope" not found' in missing


async def test_wait_for_first_consumer_claim_gets_the_node_before_the_pod(cluster: Cluster,
                                                                         scheduler: Process) -> None:
    await cluster.add_node("bare")  # keeps no local volumes: not a candidate for local-path claims
    keeper = await cluster.add_node("keeper", **{"picokube.io/local-volume-dir": "/srv/volumes"})
    cls = f"local-{cluster.suffix}"
    await cluster.client.create(StorageClass.model_validate({
        "metadata": {"name": cls}, "provisioner": "picokube.io/local-path",
        "volumeBindingMode": "WaitForFirstConsumer"}))
    await cluster.claim("late", cls)
    await cluster.pod("first", "late")

    async def selected() -> str | None:
        claim = await cluster.client.get(PersistentVolumeClaim, "late", cluster.namespace)
        return (claim.metadata.annotations or {}).get("volume.kubernetes.io/selected-node")
    assert await eventually(selected, timeout=30, message="the selected-node annotation") == keeper
    assert await cluster.node_of("first") is None  # not bound while its claim is not
    await cluster.bind("late", f"pvc-{cluster.suffix}", cls, keeper)
    assert await eventually(lambda: cluster.node_of("first"), timeout=30, message="the pod bound") == keeper
