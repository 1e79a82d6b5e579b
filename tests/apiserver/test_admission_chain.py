"""Every write of every resource passes the admission chain: a plugin registered in a test sees
create, update (PUT and PATCH) and delete of pods, configmaps and deployments, and a
validating plugin's rejection stores nothing.

The server runs in-process (the real app, the real registry and the real etcd, reached through
httpx's ASGI transport), so the test can hand it its own plugin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from apiserver.admission import Attributes, Operation
from apiserver.server import ApiServer
from kube.errors import Forbidden
from tests.apiserver.inprocess import admin_client, serve_in_process


class Recorder:
    """A plugin in both phases that remembers what it saw and refuses configmaps named `refused`."""

    name = "Recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, str, str]] = []

    def handles(self, operation: Operation) -> bool:
        return True

    def _record(self, phase: str, attrs: Attributes) -> None:
        self.seen.append((phase, attrs.operation.value, attrs.resource.plural, attrs.subresource, attrs.name))

    async def admit(self, attrs: Attributes) -> None:
        self._record("admit", attrs)
        if attrs.operation is Operation.CREATE and attrs.object is not None:
            attrs.object["metadata"].setdefault("labels", {})["admitted-by"] = "recorder"

    async def validate(self, attrs: Attributes) -> None:
        self._record("validate", attrs)
        if attrs.targets("", "configmaps") and attrs.name == "refused":
            raise Forbidden('configmaps "refused" is forbidden: the recorder says no')


@pytest_asyncio.fixture
async def served(etcd_endpoint: str, tmp_path: Path) -> AsyncIterator[tuple[ApiServer, Recorder]]:
    recorder = Recorder()
    async with serve_in_process(etcd_endpoint, tmp_path, admission_plugins=[recorder]) as server:
        yield server, recorder


def _client(server: ApiServer) -> httpx.AsyncClient:
    return admin_client(server)


POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
CONFIGMAP: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}
DEPLOYMENT: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"app": "d"}},
                       "template": {"metadata": {"labels": {"app": "d"}},
                                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}


async def test_every_verb_of_every_resource_passes_the_chain(served: tuple[ApiServer, Recorder]) -> None:
    server, recorder = served
    recorder.seen.clear()
    async with _client(server) as c:
        for base, obj, plural in (("/api/v1/namespaces/default/pods", POD, "pods"),
                                  ("/api/v1/namespaces/default/configmaps", CONFIGMAP, "configmaps"),
                                  ("/apis/apps/v1/namespaces/default/deployments", DEPLOYMENT, "deployments")):
            name = obj["metadata"]["name"]
            created = await c.post(base, json=obj)
            assert created.status_code == 201, created.text
            assert created.json()["metadata"]["labels"]["admitted-by"] == "recorder"
            current = created.json()
            current["metadata"].setdefault("annotations", {})["put"] = "yes"
            assert (await c.put(f"{base}/{name}", json=current)).status_code == 200
            patched = await c.patch(f"{base}/{name}", json={"metadata": {"annotations": {"patched": "yes"}}},
                                    headers={"Content-Type": "application/merge-patch+json"})
            assert patched.status_code == 200, patched.text
            assert (await c.delete(f"{base}/{name}")).status_code == 200
            for phase in ("admit", "validate"):
                ops = [op for ph, op, res, sub, n in recorder.seen if ph == phase and res == plural and n == name]
                assert ops == ["CREATE", "UPDATE", "UPDATE", "DELETE"], (phase, plural, recorder.seen)


async def test_subresource_writes_pass_the_chain_with_their_subresource(
        served: tuple[ApiServer, Recorder]) -> None:
    server, recorder = served
    async with _client(server) as c:
        assert (await c.post("/api/v1/namespaces/default/pods", json=POD)).status_code == 201
        status = await c.patch("/api/v1/namespaces/default/pods/p/status", json={"status": {"phase": "Running"}},
                               headers={"Content-Type": "application/merge-patch+json"})
        assert status.status_code == 200, status.text
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                   "target": {"kind": "Node", "name": "n1"}}
        assert (await c.post("/api/v1/namespaces/default/pods/p/binding", json=binding)).status_code == 201
    writes = {(op, sub) for ph, op, res, sub, n in recorder.seen if ph == "validate" and res == "pods"}
    assert {("CREATE", ""), ("UPDATE", "status"), ("UPDATE", "binding")} <= writes


async def test_a_validating_rejection_stores_nothing(served: tuple[ApiServer, Recorder]) -> None:
    server, _ = served
    async with _client(server) as c:
        refused = await c.post("/api/v1/namespaces/default/configmaps",
                               json={**CONFIGMAP, "metadata": {"name": "refused"}})
        assert refused.status_code == 403
        assert refused.json()["reason"] == "Forbidden"
        assert "the recorder says no" in refused.json()["message"]
        assert (await c.get("/api/v1/namespaces/default/configmaps/refused")).status_code == 404
