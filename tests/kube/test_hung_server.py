"""A client notices an API server that stops answering (SIGSTOP: a hung process, a lost machine),
not only one that closes its socket: a bookmarked watch is abandoned after its idle bound, and a watch
resumed from the last resourceVersion once the server answers again misses nothing."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from kube.api import ConfigMap
from kube.client import RESTClient
from kube.client.config import ClientConfig
from kube.testing.apiserver import ApiServerHarness

pytestmark = pytest.mark.timeout(120)


async def test_a_watch_on_a_stopped_server_is_abandoned(etcd_endpoint: str, tmp_path: Path) -> None:
    with ApiServerHarness(tmp_path, etcd_endpoint=etcd_endpoint) as server:
        async with RESTClient(server.client_config("admin"), watch_idle_timeout=2.0) as client:
            listed = await client.list_raw(ConfigMap.info, "default")
            rv = str(listed["metadata"]["resourceVersion"])
            server.process.send_signal(signal.SIGSTOP)
            try:
                # Without the idle bound this would wait for the stopped server forever.
                with pytest.raises(httpx.ReadTimeout):
                    async for _ in client.watch_raw(ConfigMap.info, "default", resource_version=rv):
                        pass
            finally:
                server.process.send_signal(signal.SIGCONT)
            cm = await client.create(ConfigMap.model_validate({"metadata": {"name": "after", "namespace": "default"}}))
            seen: list[tuple[str, str]] = []
            async for ev in client.watch_raw(ConfigMap.info, "default", resource_version=rv):
                seen.append((ev["type"], ev["object"]["metadata"]["name"]))
                break
            assert seen == [("ADDED", cm.metadata.name)]


async def test_a_get_whose_connection_broke_is_sent_again_and_a_write_is_not() -> None:
    """Behind a balancer, the GET's next attempt reaches a healthy server; a write may have been
    applied, so its failure is the caller's to handle."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) == 1 or request.method != "GET":
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(200, json={"kind": "ConfigMapList", "items": [], "metadata": {"resourceVersion": "5"}})

    config = ClientConfig(server="https://apiserver.invalid")
    async with RESTClient(config, transport=httpx.MockTransport(handler)) as c:
        listed = await c.list_raw(ConfigMap.info, "default")
        assert listed["metadata"]["resourceVersion"] == "5" and calls == ["GET", "GET"]
        with pytest.raises(httpx.ReadError):
            await c.create_raw(ConfigMap.info, {"metadata": {"name": "x"}}, "default")
        assert calls == ["GET", "GET", "POST"]
