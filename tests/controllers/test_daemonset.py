"""The DaemonSet controller in a real controller-manager against a real API server (no scheduler,
no kubelet: the test plays the kubelet where pods must become Ready, and Node objects stand in
for machines). Each test labels its own nodes and selects them, so tests do not see each other's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from controllers.daemonset.placement import target_node_name
from kube.api import ControllerRevision, DaemonSet, Event, Namespace, Node, Pod
from kube.client import RESTClient
from kube.errors import NotFound
from kube.podutil import is_pod_ready
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(120)


class Fixture:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.tag = uuid.uuid4().hex[:6]
        self.namespace = f"ds-{self.tag}"
        self.nodes: list[str] = []

    async def add_node(self, suffix: str, *, labels: dict[str, str] | None = None,
                       taints: list[dict[str, Any]] | None = None) -> str:
        name = f"n-{self.tag}-{suffix}"
        await self.client.create(Node.model_validate({
            "metadata": {"name": name, "labels": {"ds-test": self.tag, **(labels or {})}},
            "spec": {"taints": taints or []}}))
        self.nodes.append(name)
        return name

    async def create(self, name: str, *, image: str = "busybox:1", **spec: Any) -> DaemonSet:
        template_spec = {"nodeSelector": {"ds-test": self.tag}, "containers": [{"name": "c", "image": image}]}
        return await self.client.create(DaemonSet.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec}, **spec}}))

    async def pods(self, name: str) -> list[Pod]:
        pods = (await self.client.list(Pod, self.namespace, label_selector=f"app={name}")).items
        return [p for p in pods if p.metadata.deletion_timestamp is None]

    async def pods_by_node(self, name: str) -> dict[str, list[Pod]]:
        grouped: dict[str, list[Pod]] = {}
        for pod in await self.pods(name):
            grouped.setdefault(target_node_name(pod) or "", []).append(pod)
        return grouped

    async def mark_ready(self, pods: list[Pod]) -> None:
        """Play the kubelet: report the pods Running and Ready."""
        for pod in pods:
            await self.client.patch(Pod, pod.metadata.name or "", {"status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}},
                self.namespace, subresource="status")

    async def cleanup(self) -> None:
        for node in self.nodes:
            try:
                await self.client.delete(Node, node)
            except NotFound:
                pass


@pytest_asyncio.fixture
async def f(api: ApiServerHarness, manager: Process) -> AsyncIterator[Fixture]:
    async with api.client("admin") as client:
        fx = Fixture(client)
        await client.create(Namespace.model_validate({"metadata": {"name": fx.namespace}}))
        try:
            yield fx
        finally:
            await fx.cleanup()


def one_each(expected: set[str]) -> Any:
    def check(grouped: dict[str, list[Pod]]) -> bool:
        return set(grouped) == expected and all(len(p) == 1 for p in grouped.values())
    return check


async def test_one_pod_per_eligible_node_follows_nodes(f: Fixture) -> None:
    a, b = await f.add_node("a"), await f.add_node("b")
    await f.add_node("other", labels={"ds-test": "someone-else"})  # the nodeSelector keeps it out
    tainted = await f.add_node("tainted", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    await f.create("agent")

    async def placed(expected: set[str]) -> dict[str, list[Pod]] | None:
        grouped = await f.pods_by_node("agent")
        return grouped if one_each(expected)(grouped) else None

    grouped = await eventually(lambda: placed({a, b}), timeout=20, message="one pod on each of a and b")
    pod = grouped[a][0]
    assert pod.spec.node_name is None  # the scheduler binds it
    term = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution  # type: ignore[union-attr]
    assert term is not None and term.node_selector_terms[0].match_fields[0].values == [a]  # type: ignore[index]
    tolerated = {(t.key, t.effect) for t in pod.spec.tolerations or []}
    assert {("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"),
            ("node.kubernetes.io/unschedulable", "NoSchedule")} <= tolerated
    assert (pod.metadata.labels or {}).get("controller-revision-hash")

    async def status(desired: int) -> DaemonSet | None:
        ds = await f.client.get(DaemonSet, "agent", f.namespace)
        st = ds.status
        done = (st.desired_number_scheduled, st.current_number_scheduled, st.updated_number_scheduled) == \
            (desired, desired, desired) and st.observed_generation == ds.metadata.generation
        return ds if done else None

    await eventually(lambda: status(2), timeout=20, message="status counts two nodes")

    c = await f.add_node("c")
    await eventually(lambda: placed({a, b, c}), timeout=20, message="the new node gets a pod")
    await f.client.delete(Node, b)
    await eventually(lambda: placed({a, c}), timeout=20, message="the removed node's pod goes")
    # A NoSchedule taint keeps new pods off, but the pod already there stays.
    await f.client.patch(Node, a, {"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}})
    await f.client.patch(Node, tainted, {"spec": {"taints": []}})
    await eventually(lambda: placed({a, c, tainted}), timeout=20, message="untainted node gets a pod, a keeps its")
    await eventually(lambda: status(2), timeout=20, message="a tainted node with a pod is no longer desired")

    async def created_events() -> list[Event] | None:
        events = (await f.client.list(Event, f.namespace)).items
        found = [e for e in events if e.reason == "SuccessfulCreate" and e.involved_object.kind == "DaemonSet"]
        return found if len(found) >= 4 else None

    await eventually(created_events, timeout=20, message="SuccessfulCreate events")


async def test_rolling_update_respects_max_unavailable_and_records_revisions(f: Fixture) -> None:
    nodes = {await f.add_node(str(i)) for i in range(4)}
    await f.create("roll", updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}})

    async def all_ready(image: str) -> dict[str, list[Pod]] | None:
        grouped = await f.pods_by_node("roll")
        await f.mark_ready([p for ps in grouped.values() for p in ps if not is_pod_ready(p)])
        if not one_each(nodes)(grouped):
            return None
        return grouped if all(ps[0].spec.containers[0].image == image for ps in grouped.values()) else None

    await eventually(lambda: all_ready("busybox:1"), timeout=20, message="first generation everywhere")
    await f.client.patch(DaemonSet, "roll", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:2"}]}}}}, f.namespace)

    worst = len(nodes)

    async def rolled() -> dict[str, list[Pod]] | None:
        nonlocal worst
        grouped = await f.pods_by_node("roll")
        ready_nodes = sum(1 for ps in grouped.values() if any(is_pod_ready(p) for p in ps))
        worst = min(worst, ready_nodes)
        # Play a slow kubelet: one pending pod becomes Ready per poll.
        pending = [p for ps in grouped.values() for p in ps if not is_pod_ready(p)]
        await f.mark_ready(pending[:1])
        if not one_each(nodes)(grouped):
            return None
        return grouped if all(ps[0].spec.containers[0].image == "busybox:2" for ps in grouped.values()) else None

    grouped = await eventually(rolled, timeout=40, interval=0.2, message="second generation everywhere")
    assert worst >= len(nodes) - 1, f"{len(nodes) - worst} nodes were unavailable at once (maxUnavailable 1)"

    revisions = (await f.client.list(ControllerRevision, f.namespace)).items
    by_number = {r.revision: r for r in revisions}
    assert set(by_number) == {1, 2}
    current = by_number[2]
    assert current.metadata.name and current.metadata.name.startswith("roll-")
    assert current.data["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:2"  # type: ignore[index]
    assert current.data["spec"]["template"]["$patch"] == "replace"  # type: ignore[index]
    hash_ = (current.metadata.labels or {})["controller-revision-hash"]
    assert current.metadata.name == f"roll-{hash_}"
    assert all((ps[0].metadata.labels or {})["controller-revision-hash"] == hash_ for ps in grouped.values())

    async def settled() -> DaemonSet | None:
        ds = await f.client.get(DaemonSet, "roll", f.namespace)
        st = ds.status
        return ds if (st.updated_number_scheduled, st.number_available, st.number_ready) == (4, 4, 4) else None

    await eventually(settled, timeout=20, message="status: all updated and available")


async def test_on_delete_replaces_only_deleted_pods(f: Fixture) -> None:
    nodes = {await f.add_node(str(i)) for i in range(2)}
    await f.create("od", updateStrategy={"type": "OnDelete"})
    grouped = await eventually(lambda: _placed(f, "od", nodes), timeout=20, message="pods placed")
    await f.client.patch(DaemonSet, "od", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:2"}]}}}}, f.namespace)

    async def observed() -> DaemonSet | None:
        ds = await f.client.get(DaemonSet, "od", f.namespace)
        return ds if ds.status.observed_generation == 2 else None

    await eventually(observed, timeout=20, message="new generation observed")
    first = sorted(grouped)[0]
    victim = grouped[first][0]
    await f.client.delete(Pod, victim.metadata.name or "", f.namespace, grace_period_seconds=0)

    async def replaced() -> dict[str, list[Pod]] | None:
        now = await _placed(f, "od", nodes)
        if now is None or now[first][0].metadata.uid == victim.metadata.uid:
            return None
        return now

    now = await eventually(replaced, timeout=20, message="the deleted pod is replaced")
    images = {n: ps[0].spec.containers[0].image for n, ps in now.items()}
    assert images[first] == "busybox:2"
    assert [img for n, img in images.items() if n != first] == ["busybox:1"]


async def _placed(f: Fixture, name: str, nodes: set[str]) -> dict[str, list[Pod]] | None:
    grouped = await f.pods_by_node(name)
    return grouped if one_each(nodes)(grouped) else None
