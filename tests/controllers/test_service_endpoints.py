"""The endpoint and endpointslice controllers as a real controller-manager against a real API
server (no kubelet: the test plays it, giving pods an IP and a Ready condition): a Service's
EndpointSlices and Endpoints follow its pods through scaling, readiness, termination, named
ports, selector changes and deletion, and a steady state writes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Endpoints, EndpointSlice, Namespace, Node, Pod, Service
from kube.client import RESTClient
from kube.errors import AlreadyExists, NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
ZONE = "topology.kubernetes.io/zone"
HEADLESS = "service.kubernetes.io/headless"


class Cluster:
    """An admin client, a fresh namespace, and the kubelet's part played by hand."""

    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"ep-{uuid.uuid4().hex[:6]}"
        self._ips = iter(range(2, 250))
        self.subnet = f"10.{uuid.uuid4().int % 200 + 20}.{uuid.uuid4().int % 250}"

    async def service(self, name: str, *, ports: list[dict[str, Any]] | None = None,
                      selector: dict[str, str] | None = None, **spec: Any) -> Service:
        body: dict[str, Any] = {"ports": ports if ports is not None else [{"name": "http", "port": 80,
                                                                             "targetPort": 8080}], **spec}
        body["selector"] = {"app": name} if selector is None else selector
        return await self.client.create(Service.model_validate({
            "metadata": {"name": name, "namespace": self.namespace}, "spec": body}))

    async def pod(self, name: str, *, app: str, ready: bool = True, node: str = "ep-node-a",
                  ports: list[dict[str, Any]] | None = None) -> Pod:
        """A pod bound to `node`, running with an IP, Ready or not."""
        container: dict[str, Any] = {"name": "web", "image": "nginx:1.25"}
        if ports:
            container["ports"] = ports
        await self.client.create(Pod.model_validate({
            "metadata": {"name": name, "namespace": self.namespace, "labels": {"app": app}},
            "spec": {"nodeName": node, "containers": [container]}}))
        ip = f"{self.subnet}.{next(self._ips)}"
        return await self.client.patch(Pod, name, {"status": {
            "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "conditions": [
                {"type": "Ready", "status": "True" if ready else "False",
                 "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}, self.namespace, subresource="status")

    async def set_ready(self, name: str, ready: bool) -> None:
        await self.client.patch(Pod, name, {"status": {"conditions": [
            {"type": "Ready", "status": "True" if ready else "False",
             "lastTransitionTime": "2024-01-02T00:00:00Z"}]}}, self.namespace, subresource="status")

    async def remove(self, name: str) -> None:
        await self.client.delete(Pod, name, self.namespace, grace_period_seconds=0)

    async def slices(self, service: str) -> list[EndpointSlice]:
        return (await self.client.list(EndpointSlice, self.namespace, label_selector=f"{SERVICE_NAME}={service}")).items

    async def endpoints(self, service: str) -> Endpoints | None:
        try:
            return await self.client.get(Endpoints, service, self.namespace)
        except NotFound:
            return None

    async def slice_view(self, service: str) -> dict[str, dict[str, Any]]:
        """pod name -> {conditions, ports} over every slice of the Service."""
        out: dict[str, dict[str, Any]] = {}
        for s in await self.slices(service):
            raw = s.to_dict()
            ports = sorted(p["port"] for p in raw.get("ports") or [])
            for e in raw.get("endpoints") or []:
                out[e["targetRef"]["name"]] = {**e["conditions"], "ports": ports}
        return out

    async def endpoints_view(self, service: str) -> dict[str, tuple[bool, list[int]]] | None:
        """pod name -> (ready, ports) in the Service's Endpoints, None when there is none."""
        ep = await self.endpoints(service)
        if ep is None:
            return None
        out: dict[str, tuple[bool, list[int]]] = {}
        for subset in ep.to_dict().get("subsets") or []:
            ports = sorted(p["port"] for p in subset.get("ports") or [])
            for ready, key in ((True, "addresses"), (False, "notReadyAddresses")):
                for a in subset.get(key) or []:
                    name = a["targetRef"]["name"]
                    prev = out.get(name, (ready, []))
                    out[name] = (prev[0], sorted(prev[1] + ports))
        return out

    async def wait_slices(self, service: str, want: dict[str, dict[str, Any]], message: str = "") -> None:
        async def check() -> bool:
            return await self.slice_view(service) == want
        await eventually(check, timeout=20, message=message or f"slices of {service} == {want}")

    async def wait_endpoints(self, service: str, want: dict[str, tuple[bool, list[int]]] | None,
                             message: str = "") -> None:
        async def check() -> bool:
            return await self.endpoints_view(service) == want
        await eventually(check, timeout=20, message=message or f"endpoints of {service} == {want}")


def ready(ports: list[int]) -> dict[str, Any]:
    return {"ready": True, "serving": True, "terminating": False, "ports": ports}


def not_ready(ports: list[int]) -> dict[str, Any]:
    return {"ready": False, "serving": False, "terminating": False, "ports": ports}


@pytest_asyncio.fixture
async def cluster(api: ApiServerHarness, manager: Process) -> AsyncIterator[Cluster]:
    async with api.client("admin") as client:
        for node, labels in (("ep-node-a", {ZONE: "zone-a"}), ("ep-node-b", {})):
            with contextlib.suppress(AlreadyExists):
                await client.create(Node.model_validate({"metadata": {"name": node, "labels": labels}}))
        c = Cluster(client)
        await client.create(Namespace.model_validate({"metadata": {"name": c.namespace}}))
        yield c


async def test_slices_and_endpoints_follow_scaling(cluster: Cluster) -> None:
    svc = await cluster.service("web")

    async def placeholder() -> EndpointSlice | None:
        slices = await cluster.slices("web")
        return slices[0] if len(slices) == 1 and not slices[0].endpoints else None
    empty = await eventually(placeholder, timeout=20, message="one empty slice for a Service without pods")
    labels = {SERVICE_NAME: "web", MANAGED_BY: "endpointslice-controller.k8s.io"}
    if svc.spec.cluster_ip in (None, "", "None"):  # no IP allocated: upstream labels it headless too
        labels[HEADLESS] = ""
    assert empty.metadata.labels == labels
    assert empty.metadata.name and empty.metadata.name.startswith("web-")
    ref = empty.to_dict()["metadata"]["ownerReferences"]
    assert ref == [{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": svc.metadata.uid,
                    "controller": True, "blockOwnerDeletion": True}]

    for i in range(3):
        await cluster.pod(f"web-{i}", app="web", node="ep-node-a" if i else "ep-node-b")
    await cluster.wait_slices("web", {f"web-{i}": ready([8080]) for i in range(3)})
    await cluster.wait_endpoints("web", {f"web-{i}": (True, [8080]) for i in range(3)})
    (slice_,) = await cluster.slices("web")
    assert slice_.to_dict()["addressType"] == "IPv4"
    by_pod = {e["targetRef"]["name"]: e for e in slice_.to_dict()["endpoints"]}
    assert by_pod["web-1"]["nodeName"] == "ep-node-a" and by_pod["web-1"]["zone"] == "zone-a"
    assert "zone" not in by_pod["web-0"]

    await cluster.remove("web-2")
    await cluster.pod("other", app="other")
    await cluster.wait_slices("web", {f"web-{i}": ready([8080]) for i in range(2)}, "scaled down")
    await cluster.wait_endpoints("web", {f"web-{i}": (True, [8080]) for i in range(2)}, "scaled down")
    await cluster.pod("web-3", app="web")
    await cluster.wait_slices("web", {n: ready([8080]) for n in ("web-0", "web-1", "web-3")}, "scaled up")
    await cluster.wait_endpoints("web", {n: (True, [8080]) for n in ("web-0", "web-1", "web-3")}, "scaled up")


async def test_readiness_and_termination(cluster: Cluster) -> None:
    await cluster.service("api")
    await cluster.pod("api-0", app="api")
    await cluster.pod("api-1", app="api")
    await cluster.wait_slices("api", {"api-0": ready([8080]), "api-1": ready([8080])})

    await cluster.set_ready("api-0", False)
    await cluster.wait_slices("api", {"api-0": not_ready([8080]), "api-1": ready([8080])}, "api-0 not ready")
    await cluster.wait_endpoints("api", {"api-0": (False, [8080]), "api-1": (True, [8080])}, "api-0 not ready")

    # No kubelet finishes the pod, so a graceful delete leaves it terminating.
    await cluster.client.delete(Pod, "api-1", cluster.namespace)
    await cluster.wait_slices("api", {"api-0": not_ready([8080]),
                                      "api-1": {"ready": False, "serving": True, "terminating": True,
                                                "ports": [8080]}}, "api-1 terminating")
    await cluster.wait_endpoints("api", {"api-0": (False, [8080])}, "terminating pods leave Endpoints")

    await cluster.set_ready("api-0", True)
    await cluster.wait_endpoints("api", {"api-0": (True, [8080])}, "api-0 ready again")


async def test_named_target_port_resolves_per_pod(cluster: Cluster) -> None:
    await cluster.service("named", ports=[{"name": "web", "port": 80, "targetPort": "http"}])
    await cluster.pod("a", app="named", ports=[{"name": "http", "containerPort": 8080}])
    await cluster.pod("b", app="named", ports=[{"name": "http", "containerPort": 9090}])
    await cluster.pod("c", app="named", ports=[{"name": "metrics", "containerPort": 9100}])
    await cluster.wait_slices("named", {"a": ready([8080]), "b": ready([9090]), "c": ready([])})
    assert len(await cluster.slices("named")) == 3
    await cluster.wait_endpoints("named", {"a": (True, [8080]), "b": (True, [9090])})


async def test_selector_change_and_service_deletion(cluster: Cluster) -> None:
    svc = await cluster.service("sel", ports=[{"port": 80, "targetPort": 8080}])  # one unnamed port
    await cluster.pod("blue", app="sel")
    await cluster.pod("green", app="green")
    await cluster.wait_slices("sel", {"blue": ready([8080])})
    await cluster.client.patch(Service, "sel", {"spec": {"selector": {"app": "green"}}}, cluster.namespace)
    await cluster.wait_slices("sel", {"green": ready([8080])}, "selector moved to green")
    await cluster.wait_endpoints("sel", {"green": (True, [8080])}, "selector moved to green")

    # A slice someone deletes comes back.
    (gone,) = await cluster.slices("sel")
    await cluster.client.delete(EndpointSlice, gone.metadata.name or "", cluster.namespace)
    await cluster.wait_slices("sel", {"green": ready([8080])}, "slice recreated")

    await cluster.client.delete(Service, "sel", cluster.namespace)

    async def all_gone() -> bool:
        return not await cluster.slices("sel") and await cluster.endpoints("sel") is None
    await eventually(all_gone, timeout=30, message=f"slices and Endpoints of {svc.metadata.uid} removed")


async def test_headless_and_selectorless_services(cluster: Cluster) -> None:
    await cluster.service("db", ports=[], clusterIP="None")
    await cluster.pod("db-0", app="db")
    await cluster.wait_slices("db", {"db-0": ready([])})
    (slice_,) = await cluster.slices("db")
    assert (slice_.metadata.labels or {})[HEADLESS] == ""
    await cluster.wait_endpoints("db", {"db-0": (True, [])})
    ep = await cluster.endpoints("db")
    assert ep is not None and (ep.metadata.labels or {}).get(HEADLESS) == ""

    # A Service without a selector: its hand-written Endpoints stay as written, and no slices appear.
    await cluster.client.create(Service.model_validate({
        "metadata": {"name": "external", "namespace": cluster.namespace},
        "spec": {"ports": [{"port": 5432}]}}))
    await cluster.client.create(Endpoints.model_validate({
        "metadata": {"name": "external", "namespace": cluster.namespace},
        "subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 5432}]}]}))
    await cluster.pod("db-1", app="db")  # a later sync of the namespace's other Service
    await cluster.wait_slices("db", {"db-0": ready([]), "db-1": ready([])})
    ep = await cluster.endpoints("external")
    assert ep is not None and ep.to_dict()["subsets"][0]["addresses"] == [{"ip": "192.0.2.10"}]
    assert await cluster.slices("external") == []


async def test_steady_state_writes_nothing(cluster: Cluster) -> None:
    await cluster.service("calm")
    for i in range(3):
        await cluster.pod(f"calm-{i}", app="calm")
    await cluster.wait_slices("calm", {f"calm-{i}": ready([8080]) for i in range(3)})
    await cluster.wait_endpoints("calm", {f"calm-{i}": (True, [8080]) for i in range(3)})
    start = (await cluster.client.list(Pod, cluster.namespace)).resource_version
    writes: list[str] = []

    async def record(kind: type[EndpointSlice] | type[Endpoints]) -> None:
        async for ev in cluster.client.watch(kind, cluster.namespace, resource_version=start):
            if ev.type != "BOOKMARK" and ev.object is not None:
                writes.append(f"{ev.type} {kind.__name__}/{ev.object.metadata.name}")

    watchers = [asyncio.create_task(record(EndpointSlice)), asyncio.create_task(record(Endpoints))]
    try:
        # Changes that wake both controllers but change no endpoint.
        await cluster.client.patch(Service, "calm", {"metadata": {"annotations": {"note": "x"}}}, cluster.namespace)
        await cluster.client.patch(Pod, "calm-0", {"metadata": {"annotations": {"note": "x"}}}, cluster.namespace)
        await cluster.set_ready("calm-1", True)
        # Then one real change, queued behind them: exactly its two writes may appear.
        await cluster.set_ready("calm-2", False)
        await cluster.wait_slices("calm", {"calm-0": ready([8080]), "calm-1": ready([8080]),
                                           "calm-2": not_ready([8080])})
        await cluster.wait_endpoints("calm", {"calm-0": (True, [8080]), "calm-1": (True, [8080]),
                                              "calm-2": (False, [8080])})

        async def both_seen() -> bool:
            return len(writes) >= 2
        await eventually(both_seen, timeout=10, message="the watch saw the two writes")
        assert sorted(w.split("/")[0] for w in writes) == sorted(["MODIFIED Endpoints", "MODIFIED EndpointSlice"]), \
            writes
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
