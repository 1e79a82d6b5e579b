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
