"""StatefulSets against a real API server and controller-manager (no scheduler, no kubelet: the
tests play the kubelet by reporting pods Running and Ready): ordered creation and deletion,
Parallel, stable identities, rolling updates with a partition, status and revisions, and the
real kubectl's get / rollout status / rollout history."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Namespace, Pod, StatefulSet
from kube.api.apps_v1_daemonset import ControllerRevision
from kube.client import RESTClient
from kube.podutil import is_pod_ready
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process
from kube.timeutil import format_time, utc_now
from tests.controllers._kubectl import kubectl

pytestmark = pytest.mark.timeout(180)


class Namespaced:
    def __init__(self, client: RESTClient, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.events: list[tuple[str, str]] = []

    async def create(self, name: str, replicas: int, *, image: str = "nginx:1.25", **spec: Any) -> StatefulSet:
        return await self.client.create(StatefulSet.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}, **spec}}))

    async def pods(self) -> dict[str, Pod]:
        return {p.metadata.name or "": p for p in (await self.client.list(Pod, self.namespace)).items
                if p.metadata.deletion_timestamp is None}

    async def names(self, expected: set[str]) -> dict[str, Pod] | None:
        pods = await self.pods()
        return pods if set(pods) == expected else None

    async def none_left(self) -> bool:
        return not await self.pods()

    async def mark_ready(self, *names: str, since: str = "2024-01-01T00:00:00Z") -> None:
        for name in names:
            await self.client.patch(Pod, name, {"status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": since}]}},
                self.namespace, subresource="status")

    async def ready_all(self) -> None:
        """The kubelet's part for every pod not yet Running and Ready."""
        for name, pod in (await self.pods()).items():
            if not (pod.status.phase == "Running" and is_pod_ready(pod)):
                await self.mark_ready(name)

    async def observed(self, name: str, **fields: Any) -> StatefulSet | None:
        sts = await self.client.get(StatefulSet, name, self.namespace)
        if sts.status.observed_generation != sts.metadata.generation:
            return None
        values = sts.status.model_dump()
        return sts if all(values.get(k) == v for k, v in fields.items()) else None

    async def record(self) -> None:
        """(event type, pod name) of every pod event in the namespace, in order."""
        async for ev in self.client.watch(Pod, self.namespace, resource_version="0"):
            if ev.object is not None:
                self.events.append((ev.type, ev.object.metadata.name or ""))


@pytest_asyncio.fixture
async def ns(api: ApiServerHarness) -> AsyncIterator[Namespaced]:
    async with api.client("admin") as client:
        name = f"sts-{uuid.uuid4().hex[:6]}"
        await client.create(Namespace.model_validate({"metadata": {"name": name}}))
        yield Namespaced(client, name)


async def test_ordered_ready_creates_in_order_and_deletes_in_reverse(ns: Namespaced, manager: Process) -> None:
    recorder = asyncio.create_task(ns.record())
    try:
        sts = await ns.create("web", 3)
        assert (sts.spec.pod_management_policy, sts.spec.revision_history_limit) == ("OrderedReady", 10)
        pods = await eventually(lambda: ns.names({"web-0"}), timeout=30, message="web-0 alone")
        await eventually(lambda: ns.observed("web", replicas=1), timeout=30)
        assert set(await ns.pods()) == {"web-0"}, "web-1 must wait until web-0 is Running and Ready"
        web0 = pods["web-0"]
        assert (web0.spec.hostname, web0.spec.subdomain) == ("web-0", "web")
        labels = web0.metadata.labels or {}
        assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
        assert labels["apps.kubernetes.io/pod-index"] == "0"
        assert labels["controller-revision-hash"].startswith("web-")
        ref = web0.metadata.controller_ref()
        assert ref is not None and (ref.kind, ref.name, ref.uid) == ("StatefulSet", "web", sts.metadata.uid)

        await ns.mark_ready("web-0")
        await eventually(lambda: ns.names({"web-0", "web-1"}), timeout=30, message="web-1 after web-0 is ready")
        await eventually(lambda: ns.observed("web", replicas=2, ready_replicas=1), timeout=30)
        assert set(await ns.pods()) == {"web-0", "web-1"}
        await ns.mark_ready("web-1")
        await eventually(lambda: ns.names({"web-0", "web-1", "web-2"}), timeout=30)
        await ns.mark_ready("web-2")
        done = await eventually(lambda: ns.observed("web", replicas=3, ready_replicas=3, current_replicas=3,
                                                    updated_replicas=3, available_replicas=3), timeout=30)
        assert done.status.current_revision == done.status.update_revision == labels["controller-revision-hash"]
        assert [n for t, n in ns.events if t == "ADDED"] == ["web-0", "web-1", "web-2"]

        await ns.client.patch(StatefulSet, "web", {"spec": {"replicas": 0}}, ns.namespace)
        await eventually(ns.none_left, timeout=30, message="scaled to 0")
        assert [n for t, n in ns.events if t == "DELETED"] == ["web-2", "web-1", "web-0"]
    finally:
        recorder.cancel()


async def test_parallel_creates_every_pod_at_once(ns: Namespaced, manager: Process) -> None:
    await ns.create("par", 3, podManagementPolicy="Parallel")
    await eventually(lambda: ns.names({"par-0", "par-1", "par-2"}), timeout=30, message="all pods, none ready")
    await ns.client.patch(StatefulSet, "par", {"spec": {"replicas": 1}}, ns.namespace)
    await eventually(lambda: ns.names({"par-0"}), timeout=30, message="scaled down without readiness")


async def test_rolling_update_respects_the_partition(api: ApiServerHarness, ns: Namespaced, manager: Process,
                                                     tmp_path: Path) -> None:
    await ns.create("db", 3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})

    async def settled(**fields: Any) -> StatefulSet | None:
        await ns.ready_all()
        return await ns.observed("db", **fields)

    first = await eventually(lambda: settled(replicas=3, ready_replicas=3, updated_replicas=3), timeout=30)
    old = first.status.update_revision
    await ns.client.patch(StatefulSet, "db", {"spec": {"template": {"spec": {
        "containers": [{"name": "web", "image": "nginx:1.26"}]}}}}, ns.namespace)
    rolled = await eventually(lambda: settled(replicas=3, ready_replicas=3, updated_replicas=1, current_replicas=2),
                              timeout=30, message="only db-2 updated")
    new = rolled.status.update_revision
    assert new != old and rolled.status.current_revision == old
    pods = await ns.pods()
    images = {name: pod.spec.containers[0].image for name, pod in pods.items()}
    assert images == {"db-0": "nginx:1.25", "db-1": "nginx:1.25", "db-2": "nginx:1.26"}
    assert (pods["db-2"].metadata.labels or {})["controller-revision-hash"] == new
    revisions = (await ns.client.list(ControllerRevision, ns.namespace)).items
    assert sorted((r.metadata.name, r.revision) for r in revisions) == sorted([(old, 1), (new, 2)])

    partitioned = kubectl(api, "-n", ns.namespace, "rollout", "status", "sts/db", "--timeout", "20s",
                          cache=tmp_path)
    assert partitioned.returncode == 0, partitioned.stderr
    assert "partitioned roll out complete: 1 new pods have been updated..." in partitioned.stdout

    await ns.client.patch(StatefulSet, "db", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}},
                          ns.namespace)
    done = await eventually(lambda: settled(replicas=3, ready_replicas=3, updated_replicas=3, current_replicas=3),
                            timeout=60, message="every pod updated")
    assert done.status.current_revision == done.status.update_revision == new
    assert {p.spec.containers[0].image for p in (await ns.pods()).values()} == {"nginx:1.26"}

    history = kubectl(api, "-n", ns.namespace, "rollout", "history", "sts/db", cache=tmp_path)
    assert history.returncode == 0, history.stderr
    assert [line.split()[0] for line in history.stdout.splitlines()[2:] if line.strip()] == ["1", "2"]
    listed = kubectl(api, "-n", ns.namespace, "get", "sts", "-o", "wide", cache=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert row.split()[:2] == ["db", "3/3"] and row.split()[3:] == ["web", "nginx:1.26"]


async def test_on_delete_updates_only_deleted_pods(ns: Namespaced, manager: Process) -> None:
    await ns.create("od", 2, updateStrategy={"type": "OnDelete"})

    async def settled(**fields: Any) -> StatefulSet | None:
        await ns.ready_all()
        return await ns.observed("od", **fields)

    await eventually(lambda: settled(replicas=2, ready_replicas=2), timeout=30)
    await ns.client.patch(StatefulSet, "od", {"spec": {"template": {"spec": {
        "containers": [{"name": "web", "image": "nginx:1.26"}]}}}}, ns.namespace)
    await eventually(lambda: settled(replicas=2, updated_replicas=0), timeout=30)
    assert {p.spec.containers[0].image for p in (await ns.pods()).values()} == {"nginx:1.25"}
    await ns.client.delete(Pod, "od-1", ns.namespace, grace_period_seconds=0)
    await eventually(lambda: settled(replicas=2, ready_replicas=2, updated_replicas=1), timeout=30)
    images = {name: pod.spec.containers[0].image for name, pod in (await ns.pods()).items()}
    assert images == {"od-0": "nginx:1.25", "od-1": "nginx:1.26"}


async def test_ordered_ready_waits_min_ready_seconds(ns: Namespaced, manager: Process) -> None:
    await ns.create("slow", 2, minReadySeconds=3)
    await eventually(lambda: ns.names({"slow-0"}), timeout=30)
    marked = time.monotonic()
    await ns.mark_ready("slow-0", since=format_time(utc_now()))
    await eventually(lambda: ns.observed("slow", replicas=1, ready_replicas=1, available_replicas=0), timeout=30)
    assert set(await ns.pods()) == {"slow-0"}, "slow-1 waits until slow-0 has been ready for minReadySeconds"
    await eventually(lambda: ns.names({"slow-0", "slow-1"}), timeout=30, message="slow-1 once slow-0 is available")
    assert time.monotonic() - marked >= 2.5
    await eventually(lambda: ns.observed("slow", replicas=2, ready_replicas=1, available_replicas=1), timeout=30)
