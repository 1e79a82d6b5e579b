"""`bench services`, part one: one node's proxy programming 1000 Services of 10 endpoints each.

What runs: a private etcd, one API server, and `python -m proxy` as node-1's proxy with the
flags `picokube up` gives it (kube-proxy's sync periods: at most 30 s between full syncs, at
least 1 s between two); no controller-manager. The Services have no selector and the
benchmark writes their EndpointSlices itself, as the EndpointSlice controller would, so the
figures are the proxy's (its watches, model, rendering and iptables-restore), not the
controllers'. With `mode` iptables the proxy programs the network namespace this process
runs in (the caller makes it a private one); simulated, it only renders.

Measured:
- `programmed_after_last_write_s`: from the response to the last write to the end of the
  proxy sync that programmed every Service and endpoint (its
  `kubeproxy_sync_proxy_rules_last_timestamp_seconds`, once its rule count is the expected one);
- `sync_p50_s`: one sync at that size (build the model, render, iptables-restore), from the
  `kubeproxy_sync_proxy_rules_duration_seconds` histogram across single-endpoint changes;
  `endpoint_change_programmed_p50_s`: from such a change's write to its rules programmed;
- floors, in the same run: `render_s`, the same model built and rendered in this process;
  `restore_floor_s`, a bare `iptables-restore --noflush` of that very text while the proxy is
  stopped (iptables only). `sync_floor_s` is the restore floor (simulated: the render) and
  `sync_to_floor_ratio` the sync over it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import signal
import statistics
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from kube.client import RESTClient
from kube.resources import ResourceInfo, resource_for_kind
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.ports import free_port
from kube.testing.process import Process
from proxy.iptables.rules import RuleSet, render_rules
from proxy.model import build_model
from proxy.proxier import HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL

__all__ = ["measure_proxy_sync"]

CLUSTER_CIDR = "10.244.0.0/16"
FIRST_ENDPOINT = ipaddress.IPv4Address("10.244.0.2")
NODE = "node-1"


def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None, kind
    return found


SERVICES, SLICES = _info("v1", "Service"), _info("discovery.k8s.io/v1", "EndpointSlice")
NAMESPACES = _info("v1", "Namespace")


def service(name: str) -> dict[str, Any]:
    """A selector-less ClusterIP Service (its cluster IP allocated by the API server)."""
    return {"metadata": {"name": name},
            "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}}


def endpoint_slice(name: str, first: int, count: int, *, not_ready: int | None = None) -> dict[str, Any]:
    """Service `name`'s one slice: `count` endpoints from address number `first`, all ready but `not_ready`."""
    endpoints = [{"addresses": [str(FIRST_ENDPOINT + first + j)], "nodeName": NODE,
                  "conditions": {"ready": j != not_ready}} for j in range(count)]
    return {"addressType": "IPv4", "metadata": {"name": f"{name}-1", "labels": {"kubernetes.io/service-name": name}},
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}], "endpoints": endpoints}


@dataclass
class ProxyUnderTest:
    """The proxy process and what it exposes: /metrics and its status file."""

    process: Process
    port: int
    status_file: Path

    def metrics(self) -> dict[str, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return {s.name + "".join(f"{{{k}={v}}}" for k, v in sorted(s.labels.items())): s.value
                for family in text_string_to_metric_families(text) for s in family.samples}

    def synced(self) -> tuple[float, float, float]:
        """(syncs so far, their total seconds, nat rules last programmed)."""
        m = self.metrics()
        return (m.get("kubeproxy_sync_proxy_rules_duration_seconds_count", 0.0),
                m.get("kubeproxy_sync_proxy_rules_duration_seconds_sum", 0.0),
                m.get("kubeproxy_sync_proxy_rules_iptables_total{table=nat}", -1.0))

    async def programmed(self, nat_rules: int, *, timeout: float) -> float:
        """Wait until the last sync programmed `nat_rules` nat rules; the wall time that sync ended."""
        async def check() -> float | None:
            m = await asyncio.to_thread(self.metrics)
            if m.get("kubeproxy_sync_proxy_rules_iptables_total{table=nat}") != nat_rules:
                return None
            return m["kubeproxy_sync_proxy_rules_last_timestamp_seconds"]
        return await eventually(check, timeout=timeout, interval=0.05, message=f"{nat_rules} nat rules programmed")


def start_proxy(api: ApiServerHarness, mode: str, workdir: Path) -> ProxyUnderTest:
    port, status_file = free_port(), workdir / "proxy" / f"{NODE}.json"
    process = api.component("proxy", "--hostname-override", NODE, "--proxy-mode", mode, "--cluster-cidr", CLUSTER_CIDR,
                            "--healthz-bind-address", f"127.0.0.1:{port}", "--status-file", str(status_file),
                            "--log-level", "WARNING", identity="proxy", log_path=workdir / "proxy.log").start()
    proxy = ProxyUnderTest(process, port, status_file)
    process.wait_ready(lambda: proxy.synced()[0] > 0, timeout=60)
    return proxy


async def write_all(client: RESTClient, ns: str, services: int, endpoints: int, concurrency: int) -> float:
    """Create every Service and its slice, `concurrency` Services at a time; the wall time of the last response."""
    sem, last = asyncio.Semaphore(concurrency), 0.0

    async def one(i: int) -> None:
        nonlocal last
        async with sem:
            await client.create_raw(SERVICES, service(f"s-{i}"), ns)
            await client.create_raw(SLICES, endpoint_slice(f"s-{i}", i * endpoints, endpoints), ns)
            last = max(last, time.time())
    await asyncio.gather(*(one(i) for i in range(services)))
    return last


async def render_current(client: RESTClient) -> tuple[RuleSet, float]:
    """What the proxy should program now (listed as it watches), and the seconds building and rendering took."""
    services = (await client.list_raw(SERVICES, label_selector=f"!{SERVICE_PROXY_NAME_LABEL}"))["items"]
    slices = (await client.list_raw(SLICES, label_selector=f"!{SERVICE_PROXY_NAME_LABEL},!{HEADLESS_LABEL}"))["items"]
    start = time.perf_counter()
    model = build_model(services, slices, local_nodes=frozenset({NODE}))
    rules = render_rules(model, cluster_cidr=CLUSTER_CIDR)
    return rules, time.perf_counter() - start


async def single_syncs(client: RESTClient, proxy: ProxyUnderTest, ns: str, *, rounds: int,
                       endpoints: int) -> tuple[list[float], list[float]]:
    """Turn one endpoint not ready and back, `rounds` changes; each one's sync seconds and write-to-programmed."""
    durations, latencies = [], []
    for k in range(rounds):
        count, total, _ = await asyncio.to_thread(proxy.synced)
        await client.patch_raw(SLICES, "s-0-1", {"endpoints": endpoint_slice(
            "s-0", 0, endpoints, not_ready=0 if k % 2 == 0 else None)["endpoints"]}, ns)
        written = time.time()
        expected, _ = await render_current(client)  # not timed: the end is the proxy's own sync timestamp
        ended = await proxy.programmed(expected.nat_rules, timeout=120)
        latencies.append(ended - written)
        count2, total2, _ = await asyncio.to_thread(proxy.synced)
        durations.append((total2 - total) / max(1.0, count2 - count))
    return durations, latencies


def restore_floor(proxy: ProxyUnderTest, text: str, rounds: int) -> list[float]:
    """A bare `iptables-restore --noflush` of `text`, as the proxy runs it, while the proxy is stopped."""
    times = []
    proxy.process.send_signal(signal.SIGSTOP)
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            subprocess.run(["iptables-restore", "--noflush", "--wait"], input=text, text=True, check=True,
                           capture_output=True, timeout=300)
            times.append(time.perf_counter() - start)
    finally:
        proxy.process.send_signal(signal.SIGCONT)
    return times


async def _measure(api: ApiServerHarness, proxy: ProxyUnderTest, *, mode: str, services: int, endpoints: int,
                   rounds: int) -> dict[str, Any]:
    ns = "bench-services"
    async with api.client("admin") as client:
        await client.create_raw(NAMESPACES, {"metadata": {"name": ns}})
        begin = time.time()
        last_write = await write_all(client, ns, services, endpoints, concurrency=32)
        rules, _ = await render_current(client)
        ended = await proxy.programmed(rules.nat_rules, timeout=600)
        summary = json.loads(proxy.status_file.read_text())["summary"]
        assert summary["endpoints"] >= services * endpoints, summary
        durations, latencies = await single_syncs(client, proxy, ns, rounds=rounds, endpoints=endpoints)
        rules, _ = await render_current(client)
        renders = [(await render_current(client))[1] for _ in range(rounds)]
    restores = restore_floor(proxy, rules.text, rounds) if mode == "iptables" else []
    sync, render = statistics.median(durations), statistics.median(renders)
    restore = statistics.median(restores) if restores else None
    floor = restore if restore is not None else render
    return {"proxy_mode": mode, "services": services, "endpoints_per_service": endpoints,
            "nat_rules": rules.nat_rules, "write_s": round(last_write - begin, 2),
            "programmed_after_last_write_s": round(ended - last_write, 2),
            "sync_p50_s": round(sync, 3), "endpoint_change_programmed_p50_s": round(statistics.median(latencies), 3),
            "render_s": round(render, 3), "restore_floor_s": round(restore, 3) if restore is not None else None,
            "sync_floor_s": round(floor, 3), "sync_to_floor_ratio": round(sync / floor, 2) if floor > 0 else None}


def measure_proxy_sync(workdir: Path, etcd_endpoint: str, *, mode: str, services: int, endpoints: int,
                       rounds: int) -> dict[str, Any]:
    """Run part one against a private API server on `etcd_endpoint`; its figures."""
    with ApiServerHarness(workdir, etcd_endpoint=etcd_endpoint, nodes=(NODE,)) as api:
        proxy = start_proxy(api, mode, workdir)
        try:
            return asyncio.run(_measure(api, proxy, mode=mode, services=services, endpoints=endpoints,
                                        rounds=rounds))
        finally:
            proxy.process.stop(grace=60)
