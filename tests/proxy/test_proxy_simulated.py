"""`python -m proxy --proxy-mode simulated` against a real API server: it reports what it would program.

The proxy runs as its own process with its own identity (system:kube-proxy, bound to
system:node-proxier); the tests write Services and EndpointSlices through the API, as a user
and the EndpointSlice controller would, and read the proxy's report from /status and from its
status file.
"""

from __future__ import annotations

import json
import signal
import sys
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kube.client import RESTClient
from kube.resources import ResourceInfo, resource_for_kind
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.ports import free_port
from kube.testing.process import Process
from tests.proxy.builders import make_service, make_slice

pytestmark = pytest.mark.timeout(120)



def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None
    return found


SERVICES, SLICES = _info("v1", "Service"), _info("discovery.k8s.io/v1", "EndpointSlice")
NAMESPACES = _info("v1", "Namespace")


class SimulatedProxy:
    def __init__(self, process: Process, port: int, status_file: Path) -> None:
        self.process, self.port, self.status_file = process, port, status_file

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def status(self) -> dict[str, Any]:
        code, body = self.get("/status")
        assert code == 200
        return dict(json.loads(body))

    def ports_of(self, namespace: str) -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in self.status()["servicePorts"] if p["name"].startswith(f"{namespace}/")}


@pytest.fixture
def proxy(api: ApiServerHarness, tmp_path: Path) -> Iterator[SimulatedProxy]:
    port, status_file = free_port(), tmp_path / "status" / "node-1.json"
    process = api.component("proxy", "--hostname-override", "node-1", "--proxy-mode", "simulated",
                            "--cluster-cidr", "10.244.0.0/16", "--iptables-min-sync-period", "0.2",
                            "--healthz-bind-address", f"127.0.0.1:{port}", "--status-file", str(status_file),
                            "--log-level", "DEBUG", identity="proxy", log_path=tmp_path / "proxy.log").start()
    try:
        yield SimulatedProxy(process, port, status_file)
    finally:
        process.stop()
        sys.stderr.write(f"--- proxy log ---\n{process.log()[-20000:]}\n")


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[tuple[RESTClient, str]]:
    namespace = f"proxy-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as client:
        await client.create_raw(NAMESPACES, {"metadata": {"name": namespace}})
        yield client, namespace


async def test_the_report_follows_services_and_their_ready_endpoints(
        proxy: SimulatedProxy, admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    web = make_service("web", namespace=ns, cluster_ip="10.96.100.10", type_="NodePort",
                       ports=[{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080,
                               "nodePort": 30080}])
    await client.create_raw(SERVICES, web, ns)
    key = f"{ns}/web:http"

    async def reported(endpoints: list[str]) -> dict[str, Any] | None:
        port = proxy.ports_of(ns).get(key)
        return port if port is not None and port["endpoints"] == endpoints else None

    port = await eventually(lambda: reported([]), message="the Service, without endpoints")
    assert (port["clusterIP"], port["port"], port["nodePort"], port["protocol"]) == ("10.96.100.10", 80, 30080, "TCP")

    endpoints = [("10.244.1.5", True), ("10.244.2.6", True), ("10.244.1.7", False)]
    await client.create_raw(SLICES, make_slice("web", endpoints, namespace=ns, name="web-1"), ns)
    await eventually(lambda: reported(["10.244.1.5:8080", "10.244.2.6:8080"]), message="only the ready endpoints")

    # One pod turns not ready: it gets no new connections.
    turned = make_slice("web", [("10.244.1.5", True), ("10.244.2.6", False), ("10.244.1.7", False)],
                        namespace=ns, name="web-1")
    current = await client.get_raw(SLICES, "web-1", ns)
    turned["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    await client.replace_raw(SLICES, turned, name="web-1", namespace=ns)
    await eventually(lambda: reported(["10.244.1.5:8080"]), message="the not-ready endpoint dropped")

    document = json.loads(proxy.status_file.read_text())
    assert document["mode"] == "simulated" and document["nodeName"] == "node-1" and document["programming"]
    assert document["summary"]["natRules"] > 0

    await client.delete_raw(SERVICES, "web", ns)

    async def gone() -> bool:
        return key not in proxy.ports_of(ns)

    await eventually(gone, message="the deleted Service's rules gone")


async def test_health_metrics_mode_and_a_clean_stop(proxy: SimulatedProxy, admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    await client.create_raw(SERVICES, make_service("dns", namespace=ns, cluster_ip="10.96.100.53", ports=[
        {"name": "dns", "port": 53, "protocol": "UDP"}]), ns)
    await client.create_raw(SLICES, make_slice("dns", [("10.244.1.9", None)], namespace=ns, port=53,
                                               port_name="dns", protocol="UDP"), ns)

    async def udp_reported() -> bool:
        return proxy.ports_of(ns).get(f"{ns}/dns:dns", {}).get("endpoints") == ["10.244.1.9:53"]

    await eventually(udp_reported, message="the UDP port with its endpoint")
    code, body = proxy.get("/healthz")
    assert code == 200 and json.loads(body)["nodeEligible"] is True and json.loads(body)["lastUpdated"]
    assert proxy.get("/proxyMode") == (200, b"simulated")
    code, metrics = proxy.get("/metrics")
    assert code == 200
    assert b"kubeproxy_sync_proxy_rules_last_timestamp_seconds " in metrics
    assert b'kubeproxy_sync_proxy_rules_iptables_total{table="nat"}' in metrics
    assert b"kubeproxy_sync_proxy_rules_duration_seconds_count" in metrics

    proxy.process.send_signal(signal.SIGTERM)
    assert proxy.process.wait(timeout=20) == 0
