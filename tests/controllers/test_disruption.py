"""The disruption controller as a real controller-manager against a real API server (the test
plays the kubelet, making pods Running and Ready): a PodDisruptionBudget's status follows its
pods and their Deployment's scale, and evictions spend and restore its disruptions."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Deployment, Namespace, Pod, PodDisruptionBudget
from kube.client import RESTClient
from kube.errors import TooManyRequests
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


class Cluster:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"pdb-{uuid.uuid4().hex[:6]}"

    async def deployment(self, name: str, replicas: int) -> None:
        labels = {"app": name}
        await self.client.create(Deployment.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]}}}}))

    async def scale(self, name: str, replicas: int) -> None:
        await self.client.patch(Deployment, name, {"spec": {"replicas": replicas}}, self.namespace)

    async def pods(self, app: str) -> list[Pod]:
        listed = await self.client.list(Pod, self.namespace, label_selector=f"app={app}")
        return [p for p in listed.items if p.metadata.deletion_timestamp is None]

    async def make_ready(self, app: str, count: int, *, ready: bool = True) -> list[str]:
        """Wait for `count` pods of `app`, then report them all Running and Ready (or not)."""
        async def created() -> bool:
            return len(await self.pods(app)) == count
        await eventually(created, timeout=30, message=f"{count} pods of {app}")
        names = []
        for pod in await self.pods(app):
            await self.client.patch(Pod, str(pod.metadata.name), {"status": {
                "phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}},
                self.namespace, subresource="status")
            names.append(str(pod.metadata.name))
        return names

    async def pdb(self, name: str, app: str, **spec: Any) -> None:
        await self.client.create(PodDisruptionBudget.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}))

    async def wait_status(self, name: str, **want: Any) -> dict[str, Any]:
        seen: dict[str, Any] = {}

        async def check() -> bool:
            seen.clear()
            seen.update((await self.client.get(PodDisruptionBudget, name, self.namespace)).to_dict()["status"])
            return all(seen.get(k) == v for k, v in want.items())
        await eventually(check, timeout=30, message=f"status of {name} has {want}")
        return seen

    async def evict(self, pod: str) -> None:
        await self.client.request("POST", f"/api/v1/namespaces/{self.namespace}/pods/{pod}/eviction", body={
            "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": self.namespace}})


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness, manager: Process) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        yield c


async def test_min_available_status_follows_ready_pods(cluster: Cluster) -> None:
    await cluster.deployment("web", 3)
    await cluster.pdb("web", "web", minAvailable=2)
    # Pods may or may not exist yet; none is Ready, so nothing may be disrupted.
    await cluster.wait_status("web", currentHealthy=0, disruptionsAllowed=0, observedGeneration=1)
    await cluster.make_ready("web", 3)
    status = await cluster.wait_status("web", expectedPods=3, desiredHealthy=2, currentHealthy=3,
                                       disruptionsAllowed=1)
    [cond] = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("DisruptionAllowed", "True", "SufficientPods")
    # Every pod turning unready leaves none healthy of the two needed.
    await cluster.make_ready("web", 3, ready=False)
    status = await cluster.wait_status("web", currentHealthy=0, disruptionsAllowed=0)
    assert status["conditions"][0]["reason"] == "InsufficientPods"


async def test_percentages_count_the_deployment_scale(cluster: Cluster) -> None:
    await cluster.deployment("api", 4)
    await cluster.pdb("api", "api", maxUnavailable="50%")
    await cluster.make_ready("api", 4)
    await cluster.wait_status("api", expectedPods=4, desiredHealthy=2, currentHealthy=4, disruptionsAllowed=2)
    await cluster.scale("api", 6)  # the expected count follows the Deployment before the pods exist
    await cluster.wait_status("api", expectedPods=6, desiredHealthy=3, disruptionsAllowed=1)


async def test_evictions_spend_the_budget_until_the_workload_grows(cluster: Cluster) -> None:
    await cluster.deployment("db", 2)
    await cluster.pdb("db", "db", minAvailable=2)
    first, second = await cluster.make_ready("db", 2)
    await cluster.wait_status("db", currentHealthy=2, disruptionsAllowed=0)
    with pytest.raises(TooManyRequests):
        await cluster.evict(first)
    await cluster.scale("db", 3)
    await cluster.make_ready("db", 3)
    await cluster.wait_status("db", currentHealthy=3, disruptionsAllowed=1)
    await cluster.evict(first)
    # The evicted pod is gone; its replacement is not ready yet, so nothing more may go.
    await cluster.wait_status("db", currentHealthy=2, disruptionsAllowed=0)
    with pytest.raises(TooManyRequests):
        await cluster.evict(second)
