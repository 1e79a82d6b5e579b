"""The API server's REST semantics, through the real client against a real server and etcd."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx
import pytest

from kube.api import Deployment, Namespace, Pod
from kube.client.rest import ObjectList
from kube.errors import AlreadyExists, BadRequest, Conflict, Invalid, NotFound, ResourceExpired, Unauthorized
from kube.testing.apiserver import ApiServerHarness


def pod(name: str, ns: str, **labels: str) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns, "labels": labels},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}})


async def make_ns(api: ApiServerHarness, name: str) -> None:
    async with api.client() as c:
        try:
            await c.create(Namespace.model_validate({"metadata": {"name": name}}))
        except AlreadyExists:
            pass


async def test_create_get_conflict_and_server_fields(api: ApiServerHarness) -> None:
    await make_ns(api, "crud")
    async with api.client() as c:
        created = await c.create(pod("p", "crud", app="web"))
        assert created.metadata.uid and (created.metadata.creation_timestamp or "").endswith("Z")
        assert created.status.phase == "Pending"
        with pytest.raises(AlreadyExists, match='pods "p" already exists'):
            await c.create(pod("p", "crud"))
        got = await c.get(Pod, "p", "crud")
        assert got.metadata.resource_version == created.metadata.resource_version
        patched = await c.patch(Pod, "p", {"metadata": {"labels": {"tier": "a"}}}, "crud")
        assert patched.metadata.labels == {"app": "web", "tier": "a"}
        assert int(patched.metadata.resource_version or 0) > int(created.metadata.resource_version or 0)
        stale = created.model_copy(deep=True)
        stale.metadata.labels = {"x": "y"}
        with pytest.raises(Conflict, match="the object has been modified"):
            await c.update(stale)
        # uid cannot be changed by a client
        fresh = await c.get(Pod, "p", "crud")
        fresh.metadata.uid = "forged"
        assert (await c.update(fresh)).metadata.uid == created.metadata.uid
        with pytest.raises(NotFound, match='pods "nope" not found'):
            await c.get(Pod, "nope", "crud")


async def test_create_in_missing_namespace_and_invalid_objects(api: ApiServerHarness) -> None:
    async with api.client() as c:
        with pytest.raises(NotFound, match='namespaces "ghost" not found'):
            await c.create(pod("p", "ghost"))
        bad = Pod.model_validate({"metadata": {"name": "Bad_Name", "namespace": "default"}, "spec": {"containers": []}})
        with pytest.raises(Invalid) as err:
            await c.create(bad)
        assert err.value.details is not None
        fields = {cause["field"] for cause in err.value.details["causes"]}
        assert fields == {"metadata.name", "spec.containers"}
        with pytest.raises(NotFound):
            await c.get(Pod, "Bad_Name", "default")
        with pytest.raises(BadRequest, match="field label not supported"):
            await c.list(Pod, "default", field_selector="spec.bogus=1")


async def test_generation_and_status_subresource(api: ApiServerHarness) -> None:
    await make_ns(api, "gen")
    body = {"metadata": {"name": "d", "namespace": "gen"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    async with api.client() as c:
        d = await c.create(Deployment.model_validate(body))
        assert d.metadata.generation == 1
        d = await c.patch(Deployment, "d", {"metadata": {"labels": {"x": "1"}}}, "gen")
        assert d.metadata.generation == 1, "metadata changes do not bump generation"
        d = await c.patch(Deployment, "d", {"spec": {"replicas": 3}, "status": {"replicas": 99}}, "gen")
        assert d.metadata.generation == 2 and d.status.replicas is None, "main resource ignores status"
        d = await c.patch(Deployment, "d", {"spec": {"replicas": 7}, "status": {"replicas": 3}}, "gen",
                          subresource="status")
        assert d.status.replicas == 3 and d.spec.replicas == 3 and d.metadata.generation == 2


async def test_selectors_and_pagination(api: ApiServerHarness) -> None:
    await make_ns(api, "sel")
    async with api.client() as c:
        for i in range(7):
            await c.create(pod(f"p{i}", "sel", app="web" if i % 2 else "db", idx=str(i)))

        def names(lst: ObjectList[Pod]) -> list[str]:
            return sorted(p.metadata.name or "" for p in lst.items)

        assert names(await c.list(Pod, "sel", label_selector="app=web")) == ["p1", "p3", "p5"]
        assert names(await c.list(Pod, "sel", label_selector="app!=web,idx in (0,2,9)")) == ["p0", "p2"]
        assert names(await c.list(Pod, "sel", field_selector="metadata.name=p4")) == ["p4"]
        page = await c.list(Pod, "sel", limit=3)
        assert len(page.items) == 3 and page.continue_token
        seen = [p.metadata.name or "" for p in page.items]
        while page.continue_token:
            page = await c.list(Pod, "sel", limit=3, continue_token=page.continue_token)
            seen += [p.metadata.name or "" for p in page.items]
        assert sorted(seen) == [f"p{i}" for i in range(7)]
        empty = await c.list_raw(Pod.info, "nothing-here")
        assert empty["items"] == []


async def test_watch_from_resource_version_with_selector_transitions(api: ApiServerHarness) -> None:
    await make_ns(api, "watch")
    async with api.client() as c:
        listed = await c.list(Pod, "watch")
        events: list[tuple[str, str]] = []

        async def collect() -> None:
            async for ev in c.watch(Pod, "watch", resource_version=listed.resource_version,
                                    field_selector="spec.nodeName=n1", timeout_seconds=30):
                events.append((ev.type, (ev.object.metadata.name or "") if ev.object else ""))
                if len(events) == 3:
                    return

        task = asyncio.create_task(collect())
        await c.create(pod("w", "watch"))          # not bound: invisible to the selector
        await c.bind(namespace="watch", name="w", node_name="n1")  # now matches: ADDED
        await c.patch(Pod, "w", {"metadata": {"labels": {"a": "b"}}}, "watch")  # MODIFIED
        await c.delete(Pod, "w", "watch", grace_period_seconds=0)  # DELETED
        await asyncio.wait_for(task, 20)
        assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_watch_from_compacted_revision_is_410(api: ApiServerHarness, storage: Any) -> None:
    await make_ns(api, "compact")
    async with api.client() as c:
        first = await c.create(pod("a", "compact"))
        await c.patch(Pod, "a", {"metadata": {"labels": {"n": "1"}}}, "compact")
        await c.patch(Pod, "a", {"metadata": {"labels": {"n": "2"}}}, "compact")
        await storage.compact(await storage.current_revision())
        # Revision 1 is older than both etcd's compacted history and the watch cache's window.
        with pytest.raises(ResourceExpired, match="too old resource version"):
            async for _ in c.watch(Pod, "compact", resource_version="1", timeout_seconds=5):
                pass
        # A recent revision is still served (from the watch cache's window) after compaction.
        seen = []
        async for ev in c.watch(Pod, "compact", resource_version=first.metadata.resource_version,
                                timeout_seconds=1):
            assert ev.object is not None and ev.object.metadata.labels is not None
            seen.append(ev.object.metadata.labels["n"])
        assert seen == ["1", "2"]


async def test_binding_and_graceful_pod_delete(api: ApiServerHarness) -> None:
    await make_ns(api, "bind")
    async with api.client() as c:
        await c.create(pod("b", "bind"))
        await c.bind(namespace="bind", name="b", node_name="node-1")
        bound = await c.get(Pod, "b", "bind")
        assert bound.spec.node_name == "node-1"
        scheduled = bound.status.condition("PodScheduled")
        assert scheduled is not None and scheduled.status == "True"
        with pytest.raises(Conflict, match="already assigned"):
            await c.bind(namespace="bind", name="b", node_name="node-2")
        await c.delete(Pod, "b", "bind")
        terminating = await c.get(Pod, "b", "bind")
        assert terminating.metadata.deletion_timestamp and terminating.metadata.deletion_grace_period_seconds == 30
        await c.delete(Pod, "b", "bind", grace_period_seconds=0)
        with pytest.raises(NotFound):
            await c.get(Pod, "b", "bind")
        # An unscheduled pod has nothing to stop: it goes at once.
        await c.create(pod("u", "bind"))
        await c.delete(Pod, "u", "bind")
        with pytest.raises(NotFound):
            await c.get(Pod, "u", "bind")


async def test_finalizers_hold_deletion(api: ApiServerHarness) -> None:
    async with api.client() as c:
        ns = await c.create(Namespace.model_validate({"metadata": {"name": "fin"}}))
        await c.create_raw(Pod.info, {"metadata": {"name": "f", "finalizers": ["example.com/hold"]},
                                      "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, "fin")
        await c.delete(Pod, "f", "fin")
        held = await c.get(Pod, "f", "fin")
        assert held.metadata.deletion_timestamp and held.metadata.finalizers == ["example.com/hold"]
        await c.patch(Pod, "f", {"metadata": {"finalizers": None}}, "fin")
        with pytest.raises(NotFound):
            await c.get(Pod, "f", "fin")
        assert ns.status and ns.status.phase == "Active"


async def test_authentication_and_health(api: ApiServerHarness) -> None:
    verify = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    async with httpx.AsyncClient(base_url=api.server, verify=verify) as raw:
        assert (await raw.get("/healthz")).text == "ok"
        assert (await raw.get("/readyz")).status_code == 200
        assert (await raw.get("/version")).json()["major"] == "1"
        resp = await raw.get("/api/v1/pods")
        assert resp.status_code == 401 and resp.json()["reason"] == "Unauthorized"
        resp = await raw.get("/api/v1/pods", headers={"Authorization": "Bearer wrong"})
        assert resp.status_code == 401
        resp = await raw.post("/api/v1/namespaces/default/pods", content=b"{not json",
                              headers={"Authorization": f"Bearer {api.token('admin')}"})
        assert resp.status_code == 400 and resp.json()["kind"] == "Status"
    async with api.client() as c:
        with pytest.raises(Unauthorized):
            bad = api.client_config().with_overrides(token="nope")
            from kube.client import RESTClient
            async with RESTClient(bad) as anon:
                await anon.list(Pod, "default")
        assert "apiserver_request_total" in await c.request("GET", "/metrics")


async def test_propagation_policies_set_the_garbage_collector_finalizers(api: ApiServerHarness) -> None:
    await make_ns(api, "prop")
    async with api.client() as c:
        for name, policy, finalizer in (("o", "Orphan", "orphan"), ("f", "Foreground", "foregroundDeletion")):
            await c.create(pod(name, "prop"))
            await c.delete(Pod, name, "prop", propagation_policy=policy)
            held = await c.get(Pod, name, "prop")
            assert held.metadata.deletion_timestamp and held.metadata.finalizers == [finalizer]
            await c.patch(Pod, name, {"metadata": {"finalizers": None}}, "prop")
            with pytest.raises(NotFound):
                await c.get(Pod, name, "prop")
        await c.create(pod("b", "prop"))
        await c.delete(Pod, "b", "prop", propagation_policy="Background")
        with pytest.raises(NotFound):
            await c.get(Pod, "b", "prop")
