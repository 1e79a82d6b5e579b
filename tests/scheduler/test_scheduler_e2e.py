"""The scheduler as a real process against a real API server: binding, spreading, no
over-commit, unschedulable reporting, and surviving restarts of itself and of the API server."""

from __future__ import annotations

import asyncio
import signal
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from kube.api import Event, Namespace, Node, Pod
from kube.client import RESTClient
from kube.errors import Conflict, NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def scheduler(api: ApiServerHarness, tmp_path: Path) -> Iterator[Process]:
    """`python -m scheduler` with the scheduler identity; its log is shown when a test fails."""
    proc = api.component("scheduler", "--log-level", "DEBUG", identity="scheduler",
                         log_path=tmp_path / "scheduler.log").start()
    try:
        yield proc
    finally:
        proc.stop()
        sys.stderr.write(f"--- scheduler log ---\n{proc.log()[-20000:]}\n")  # pytest shows it on failure


class Cluster:
    """The admin's view: one namespace and the nodes of one test, removed afterwards."""

    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.suffix = uuid.uuid4().hex[:6]
        self.namespace = f"sched-{self.suffix}"
        self.nodes: list[str] = []

    async def add_node(self, name: str, *, cpu: str = "1", memory: str = "1Gi", pods: int = 10,
                       unschedulable: bool = False) -> str:
        full = f"{name}-{self.suffix}"
        node = await self.client.create(Node.model_validate(
            {"metadata": {"name": full, "labels": {"test": self.suffix}}, "spec": {"unschedulable": unschedulable}}))
        self.nodes.append(full)
        amounts = {"cpu": cpu, "memory": memory, "pods": str(pods)}
        node.status = node.status.model_validate({
            "capacity": amounts, "allocatable": amounts,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]})
        await self.client.update_status(node)
        return full

    async def add_pod(self, name: str, *, cpu: str | None = None, scheduler_name: str | None = None) -> Pod:
        container: dict[str, object] = {"name": "c", "image": "busybox:1.36"}
        if cpu:
            container["resources"] = {"requests": {"cpu": cpu}}
        spec: dict[str, object] = {"containers": [container]}
        if scheduler_name:
            spec["schedulerName"] = scheduler_name
        return await self.client.create(Pod.model_validate(
            {"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}))

    async def pods(self) -> list[Pod]:
        return (await self.client.list(Pod, self.namespace)).items

    async def bound(self, count: int) -> dict[str, str]:
        """pod -> node once exactly `count` pods are bound (falsy until then)."""
        placed = {str(p.metadata.name): str(p.spec.node_name) for p in await self.pods() if p.spec.node_name}
        return placed if len(placed) == count else {}

    async def events(self, reason: str) -> list[Event]:
        return [e for e in (await self.client.list(Event, self.namespace)).items if e.reason == reason]

    async def cleanup(self) -> None:
        for pod in await self.pods():
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


async def test_pods_are_bound_spread_and_never_over_commit(cluster: Cluster, scheduler: Process) -> None:
    a = await cluster.add_node("a", cpu="1")
    b = await cluster.add_node("b", cpu="1")
    for i in range(7):  # 3 x 300m fit on a 1-cpu node: six pods fit, the seventh does not
        await cluster.add_pod(f"p{i}", cpu="300m")

    placed = await eventually(lambda: cluster.bound(6), timeout=30, message="six pods bound")
    assert Counter(placed.values()) == {a: 3, b: 3}

    pending = next(p for p in await cluster.pods() if not p.spec.node_name)

    async def unschedulable_condition() -> str | None:
        pod = await cluster.client.get(Pod, str(pending.metadata.name), cluster.namespace)
        cond = pod.status.condition("PodScheduled")
        if cond is None or cond.status != "False":
            return None
        assert cond.reason == "Unschedulable"
        return cond.message

    message = await eventually(unschedulable_condition, timeout=30, message="PodScheduled=False")
    assert message == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                       "2 No preemption victims found for incoming pod..")
    failed = await eventually(lambda: cluster.events("FailedScheduling"), timeout=15)
    assert failed[0].type == "Warning" and failed[0].message == message
    assert failed[0].involved_object.name == pending.metadata.name

    async def retried() -> bool:  # retried with backoff; repeats aggregate into one Event
        events = await cluster.events("FailedScheduling")
        assert len(events) == 1
        return (events[0].count or 0) >= 2
    await eventually(retried, timeout=15, message="FailedScheduling count grows")

    scheduled = await eventually(lambda: cluster.events("Scheduled"), timeout=15)
    ev = next(e for e in scheduled if e.involved_object.name == "p0")
    assert ev.type == "Normal" and ev.count == 1 and ev.source is not None
    assert ev.source.component == "default-scheduler"
    assert ev.involved_object.kind == "Pod" and ev.involved_object.uid
    assert ev.message == f"Successfully assigned {cluster.namespace}/p0 to {placed['p0']}"
    bound_pod = await cluster.client.get(Pod, "p0", cluster.namespace)
    assert bound_pod.spec.node_name == placed["p0"]


async def test_failed_bindings_release_their_assumptions_and_never_over_commit(cluster: Cluster,
                                                                                  scheduler: Process) -> None:
    """A rival binds some pods behind the scheduler's back, so those of its bindings fail (409):
    each failed binding must give back what it assumed, or the last pods would find no room."""
    a = await cluster.add_node("a", pods=4)
    b = await cluster.add_node("b", pods=4)
    rival = await cluster.add_node("rival", pods=10, unschedulable=True)  # the scheduler never picks it
    scheduler.send_signal(signal.SIGSTOP)  # pods and rival bindings land while the scheduler is frozen
    try:
        for i in range(11):
            await cluster.add_pod(f"p{i}")
        await asyncio.gather(*(cluster.client.bind(namespace=cluster.namespace, name=f"p{i}", node_name=rival)
                               for i in range(3)))
    finally:
        scheduler.send_signal(signal.SIGCONT)

    async def race(name: str) -> None:  # racing the scheduler's own bindings: either side may win
        try:
            await cluster.client.bind(namespace=cluster.namespace, name=name, node_name=rival)
        except Conflict:
            pass
    await asyncio.gather(*(race(f"p{i}") for i in range(3, 6)))
    placed = await eventually(lambda: cluster.bound(11), timeout=60, message="every pod bound")
    counts = Counter(placed.values())
    assert counts[a] <= 4 and counts[b] <= 4 and counts[rival] >= 3, counts


async def test_best_effort_pods_spread_over_equal_nodes(cluster: Cluster, scheduler: Process) -> None:
    a = await cluster.add_node("a", cpu="2", memory="4Gi")
    b = await cluster.add_node("b", cpu="2", memory="4Gi")
    for i in range(6):
        await cluster.add_pod(f"p{i}")
    placed = await eventually(lambda: cluster.bound(6), timeout=30, message="six pods bound")
    assert Counter(placed.values()) == {a: 3, b: 3}


async def test_unschedulable_summary_and_retry_when_room_appears(cluster: Cluster,
                                                                 scheduler: Process) -> None:
    await cluster.add_node("cordoned", cpu="4", unschedulable=True)
    await cluster.add_node("a", cpu="1")
    await cluster.add_node("b", cpu="1")
    await cluster.add_pod("big", cpu="2")
    await cluster.add_pod("other-scheduler", cpu="100m", scheduler_name="someone-else")

    async def message() -> str | None:
        cond = (await cluster.client.get(Pod, "big", cluster.namespace)).status.condition("PodScheduled")
        return cond.message if cond is not None and cond.status == "False" else None

    assert await eventually(message, timeout=30) == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/3 nodes are "
        "available: 1 Preemption is not helpful for scheduling., 2 No preemption victims found for incoming pod..")

    # Room appears: a new node is an event that retries the pod right away.
    roomy = await cluster.add_node("roomy", cpu="4")
    placed = await eventually(lambda: cluster.bound(1), timeout=20, message="big pod bound")
    assert placed == {"big": roomy}
    other = await cluster.client.get(Pod, "other-scheduler", cluster.namespace)
    assert not other.spec.node_name  # not ours to schedule


async def test_survives_sigkill_and_api_server_restart(api: ApiServerHarness, cluster: Cluster,
                                                       scheduler: Process) -> None:
    a = await cluster.add_node("a", cpu="1")
    b = await cluster.add_node("b", cpu="1")
    for i in range(2):
        await cluster.add_pod(f"before-{i}", cpu="300m")
    first = await eventually(lambda: cluster.bound(2), timeout=30)

    scheduler.kill()
    for i in range(2):
        await cluster.add_pod(f"while-down-{i}", cpu="300m")
    scheduler.start()
    second = await eventually(lambda: cluster.bound(4), timeout=30, message="pods bound after restart")
    assert {k: v for k, v in second.items() if k in first} == first  # bound pods were left alone
    assert Counter(second.values()) == {a: 2, b: 2}

    api.stop()
    api.start()
    for i in range(2):
        await cluster.add_pod(f"after-apiserver-restart-{i}", cpu="300m")
    third = await eventually(lambda: cluster.bound(6), timeout=60, message="bound after API server restart")
    assert Counter(third.values()) == {a: 3, b: 3}
    assert scheduler.stop() == 0  # SIGTERM is a clean shutdown


async def test_leader_elected_scheduler_holds_and_releases_its_lease(api: ApiServerHarness, tmp_path: Path) -> None:
    from kube.api import Lease

    with api.component("scheduler", "--leader-elect", "--leader-elect-retry-period", "0.5", identity="scheduler",
                       log_path=tmp_path / "scheduler.log") as proc:
        async with api.client("admin") as client:
            async def held() -> str | None:
                try:
                    return (await client.get(Lease, "kube-scheduler", "kube-system")).spec.holder_identity or None
                except NotFound:
                    return None

            await eventually(held, timeout=30, message="the scheduler holds kube-system/kube-scheduler")
        assert proc.stop() == 0, proc.log()
        async with api.client("admin") as client:
            lease = await client.get(Lease, "kube-scheduler", "kube-system")
            assert not lease.spec.holder_identity  # released on SIGTERM, so a standby need not wait
