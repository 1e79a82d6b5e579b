"""A resource registered while the server runs is routed, discovered and described at once,
and one removed disappears from all three: they read the same registry."""

from __future__ import annotations

from pathlib import Path

from apiserver.registry.generic import RegistryStore
from apiserver.registry.kinds import strategy_for
from apiserver.registry.resource_registry import ServedResource
from apiserver.registry.rest import ResourceStorage, StatusStorage
from kube.resources import ResourceInfo
from tests.apiserver.inprocess import admin_client, serve_in_process

WIDGETS = ResourceInfo("example.com", "v1", "Widget", "widgets", "widget", True, ("wd",),
                       subresources=("status",), has_status=True)


async def test_a_resource_added_at_run_time_is_served_discovered_and_described(etcd_endpoint: str,
                                                                                tmp_path: Path) -> None:
    async with serve_in_process(etcd_endpoint, tmp_path) as server, admin_client(server) as c:
        base = "/apis/example.com/v1/namespaces/default/widgets"
        assert (await c.get(base)).status_code == 404
        store = RegistryStore(server.storage, WIDGETS, strategy_for(WIDGETS), prefix=server.config.etcd_prefix)
        server.registry.add(ServedResource(WIDGETS, ResourceStorage(store), {"status": StatusStorage(store)}, store))

        created = await c.post(base, json={"apiVersion": "example.com/v1", "kind": "Widget",
                                           "metadata": {"name": "w"}, "spec": {"size": 3}})
        assert created.status_code == 201, created.text
        assert (await c.get(f"{base}/w")).json()["spec"] == {"size": 3}

        resources = (await c.get("/apis/example.com/v1")).json()["resources"]
        widget = next(r for r in resources if r["name"] == "widgets")
        assert widget["kind"] == "Widget" and widget["shortNames"] == ["wd"] and "watch" in widget["verbs"]
        assert any(r["name"] == "widgets/status" and r["verbs"] == ["get", "patch", "update"] for r in resources)
        groups = [g["name"] for g in (await c.get("/apis")).json()["groups"]]
        assert "example.com" in groups
        assert "apis/example.com/v1" in (await c.get("/openapi/v3")).json()["paths"]

        server.registry.remove("example.com", "v1", "widgets")
        assert (await c.get(f"{base}/w")).status_code == 404
        assert (await c.get("/apis/example.com/v1")).status_code == 404
        assert "apis/example.com/v1" not in (await c.get("/openapi/v3")).json()["paths"]
