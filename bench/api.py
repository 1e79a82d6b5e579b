"""API server throughput, list latency and watch fan-out, each next to its baseline.

- creates/s of ConfigMaps through the API at 1 and 32 requests in flight, next to raw etcd
  create-if-absent transactions/s at the same concurrency (the ratio is the figure);
- create latency p50/p99 through the API;
- LIST latency with 1k and 10k objects (from etcd, and at resourceVersion=0 from the cache);
- watch fan-out: N watchers on one collection while ConfigMaps are created, events
  delivered per second and p99 delivery latency (creation to receipt on each watcher);
- the same creates and raw etcd transactions driven by wrk at 32 in flight, with the CPU the
  API server, etcd and wrk each spent per 1000 requests (`bench._wrk`).
Starts its own etcd (plain HTTP, which wrk needs) and API server (watch cache on, `--workers` as
asked; its CPU counts every worker) in a temp dir.
`--only` picks parts (creates, list, watch, wrk); all run by default, wrk last, so that the
objects it creates do not weigh on the other parts' figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import ssl
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._wrk import wrk_figures
from kube.api import ConfigMap, Namespace
from kube.testing.apiserver import ApiServerHarness
from kube.testing.etcd import EtcdProcess

_T = re.compile(rb'"t":"([0-9.]+)"')
PARTS = ("creates", "list", "watch", "wrk")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--creates", type=int, default=2000, help="objects per throughput run")
    p.add_argument("--watchers", default="100,1000", help="watcher counts for the fan-out runs")
    p.add_argument("--events", type=int, default=200, help="events per fan-out run")
    p.add_argument("--list-sizes", default="1000,10000")
    p.add_argument("--wrk-seconds", type=int, default=10, help="length of each wrk run")
    p.add_argument("--only", default=",".join(PARTS), help=f"parts to run, of {','.join(PARTS)}")
    p.add_argument("--workers", type=int, default=1, help="the API server's --workers")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def _bounded(n: int, concurrency: int, op: Any) -> tuple[float, list[float]]:
    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        async with sem:
            t = time.perf_counter()
            await op(i)
            latencies.append(time.perf_counter() - t)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - start), latencies


async def etcd_creates(endpoint: str, n: int, concurrency: int, tag: str) -> float:
    from apiserver.storage import Etcd3Storage

    storage = await Etcd3Storage.connect([endpoint])
    try:
        value = json.dumps({"metadata": {"name": "x"}, "data": {"k": "v" * 64}}).encode()
        rate, _ = await _bounded(n, concurrency, lambda i: storage.create(f"/bench-raw/{tag}/{i}", value))
        return rate
    finally:
        await storage.close()


class RawConnection:
    """A keep-alive HTTP/1.1 connection over TLS with no client-side framework in the way, so the
    figures measure the API server rather than a Python HTTP client sharing its CPU."""

    def __init__(self, api: ApiServerHarness) -> None:
        self.api = api

    async def open(self) -> RawConnection:
        ctx = ssl.create_default_context(cafile=str(self.api.pki.ca_cert))
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.api.port, ssl=ctx,
                                                                 server_hostname="127.0.0.1")
        return self

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.api.token('admin')}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nUser-Agent: bench\r\n\r\n")
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.split(b"\r\n")
        code = int(lines[0].split()[1])
        length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length"))
        return code, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def api_creates(api: ApiServerHarness, ns: str, n: int, concurrency: int, tag: str) -> tuple[float, list[float]]:
    conns = [await RawConnection(api).open() for _ in range(concurrency)]
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker(conn: RawConnection) -> None:
        for i in counter:
            body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{tag}-{i}"},
                               "data": {"k": "v" * 64}}).encode()
            t = time.perf_counter()
            code, _ = await conn.request("POST", f"/api/v1/namespaces/{ns}/configmaps?fieldManager=bench", body)
            latencies.append(time.perf_counter() - t)
            assert code == 201, code

    start = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    rate = n / (time.perf_counter() - start)
    for c in conns:
        c.close()
    return rate, latencies


async def list_latency(api: ApiServerHarness, ns: str, rv: str | None, rounds: int = 5) -> float:
    async with api.client() as c:
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            await c.list_raw(ConfigMap.info, ns, resource_version=rv)
            times.append(time.perf_counter() - t)
        return statistics.median(times)


async def _watcher(api: ApiServerHarness, ns: str, ctx: ssl.SSLContext, latencies: list[float],
                   ready: asyncio.Event, counter: list[int], want: int, done: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", api.port, ssl=ctx, server_hostname="127.0.0.1")
    writer.write((f"GET /api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={api_rv[ns]} HTTP/1.1\r\n"
                  f"Host: 127.0.0.1\r\nAuthorization: Bearer {api.token('admin')}\r\n"
                  "Accept: application/json\r\n\r\n").encode())
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    counter[0] += 1
    if counter[0] == counter[1]:
        ready.set()
    got = 0
    buf = b""
    try:
        while got < want:
            chunk = await reader.read(65536)
            if not chunk:
                break
            buf += chunk
            now = time.time()
            for m in _T.finditer(buf):
                latencies.append(now - float(m.group(1)))
                got += 1
            buf = buf[buf.rfind(b"\n") + 1:] if b"\n" in buf else buf
    finally:
        writer.close()
        counter[2] += 1
        if counter[2] == counter[1]:
            done.set()


api_rv: dict[str, str] = {}


async def fan_out(api: ApiServerHarness, watchers: int, events: int) -> dict[str, float]:
    ns = f"fan{watchers}"
    async with api.client() as c:
        await c.create_raw(Namespace.info,
                           {"metadata": {"name": ns}})
        api_rv[ns] = (await c.list_raw(ConfigMap.info, ns))["metadata"]["resourceVersion"]
        ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
        latencies: list[float] = []
        ready, done = asyncio.Event(), asyncio.Event()
        counter = [0, watchers, 0]
        tasks = [asyncio.create_task(_watcher(api, ns, ctx, latencies, ready, counter, events, done))
                 for _ in range(watchers)]
        await asyncio.wait_for(ready.wait(), 120)
        start = time.perf_counter()
        for i in range(events):
            await c.create_raw(ConfigMap.info, {"metadata": {"name": f"e{i}"}, "data": {"t": f"{time.time():.6f}"}}, ns)
            await asyncio.sleep(0.005)
        try:
            await asyncio.wait_for(done.wait(), 120)
        except TimeoutError:
            pass
        elapsed = time.perf_counter() - start
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    delivered = len(latencies)
    return {f"watch_{watchers}_delivered_fraction": round(delivered / (watchers * events), 4),
            f"watch_{watchers}_events_per_s": round(delivered / elapsed, 1),
            f"watch_{watchers}_p50_ms": round(pct(latencies, 0.5) * 1000, 1),
            f"watch_{watchers}_p99_ms": round(pct(latencies, 0.99) * 1000, 1)}


async def _run(opts: argparse.Namespace, etcd: EtcdProcess, api: ApiServerHarness, workdir: Path) -> dict[str, Any]:
    parts = {x.strip() for x in opts.only.split(",")}
    if unknown := parts - set(PARTS):
        raise SystemExit(f"--only: unknown parts {sorted(unknown)}, of {','.join(PARTS)}")
    out: dict[str, Any] = {}
    async with api.client() as c:
        for ns in ("bench-c1", "bench-c32", "bench-l", "bench-wrk"):
            await c.create_raw(Namespace.info, {"metadata": {"name": ns}})
    for conc in (1, 32) if "creates" in parts else ():
        n = opts.creates if conc == 32 else max(200, opts.creates // 4)
        raw = await etcd_creates(etcd.endpoint, n, conc, f"c{conc}")
        rate, lat = await api_creates(api, f"bench-c{conc}", n, conc, "cm")
        out[f"etcd_create_txn_per_s_{conc}"] = round(raw, 1)
        out[f"api_create_per_s_{conc}"] = round(rate, 1)
        out[f"api_to_etcd_ratio_{conc}"] = round(rate / raw, 3)
        out[f"api_create_p50_ms_{conc}"] = round(pct(lat, 0.5) * 1000, 2)
        out[f"api_create_p99_ms_{conc}"] = round(pct(lat, 0.99) * 1000, 2)
    created = 0
    for size in sorted(int(s) for s in opts.list_sizes.split(",")) if "list" in parts else ():
        await api_creates(api, "bench-l", size - created, 32, f"l{created}")
        created = size
        out[f"list_{size}_ms"] = round(await list_latency(api, "bench-l", None) * 1000, 1)
        out[f"list_{size}_rv0_cache_ms"] = round(await list_latency(api, "bench-l", "0") * 1000, 1)
    for w in (int(x) for x in opts.watchers.split(",")) if "watch" in parts else ():
        out.update(await fan_out(api, w, opts.events))
    if "wrk" in parts:
        out.update(await asyncio.to_thread(wrk_figures, api=api, etcd=etcd, ns="bench-wrk", workdir=workdir,
                                           seconds=opts.wrk_seconds))
    return out


def run(opts: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        etcd = EtcdProcess(data_dir=Path(tmp) / "etcd").start()
        try:
            with ApiServerHarness(Path(tmp), etcd_endpoint=etcd.endpoint,
                                  extra_args=["--workers", str(opts.workers)]) as api:
                return asyncio.run(_run(opts, etcd, api, Path(tmp)))
        finally:
            etcd.stop()
