"""Scheduler throughput on a large cluster, next to the API server's own binding ceiling.

Starts a private etcd and API server, registers `--nodes` Ready nodes (no kubelets: the
scheduler only records where), and measures:
- `algorithm_decisions_per_s`: the default profile deciding and assuming pods in-process
  over a cache of those nodes, with no HTTP at all;
- `baseline_binds_per_s`: a client POSTing pods/binding for pending pods round-robin with
  16 in flight (the scheduler's own parallelism) — the most any scheduler could bind here;
- `scheduler_pods_per_s`: end to end, from outside: `--pods` pods are created while the
  scheduler process is stopped (SIGSTOP), then it is continued and the time until a watch
  has seen every pod bound is taken; `ratio` is that rate over the baseline;
- `cycle_p50_ms` / `cycle_p99_ms`: the scheduler's per-pod scheduling-cycle latency, from its
  `--metrics-file`;
- `overcommitted_nodes`: nodes holding more pods or cpu than they offer (must be 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from kube.api import Namespace, Node, Pod
from kube.client import RESTClient
from kube.errors import ApiError, ResourceExpired
from kube.testing.apiserver import ApiServerHarness
from kube.testing.etcd import EtcdProcess
from kube.testing.eventually import eventually
from scheduler.cache import SchedulerCache
from scheduler.framework import Framework
from scheduler.plugins import IN_TREE_REGISTRY
from scheduler.profile_config import default_profile
from scheduler.schedule_one import SchedulingAlgorithm

NODE_CPU, NODE_PODS = 64, 110
POD_CPU_MILLI = 50


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=3000)
    p.add_argument("--concurrency", type=int, default=32, help="pod creates in flight")


def node(name: str, zone: int) -> Node:
    return Node.model_validate({"metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{zone}"}}})


NODE_STATUS = {"capacity": {"cpu": str(NODE_CPU), "memory": "256Gi", "pods": str(NODE_PODS)},
               "allocatable": {"cpu": str(NODE_CPU), "memory": "256Gi", "pods": str(NODE_PODS)},
               "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}


def pod(name: str, ns: str, scheduler_name: str = "default-scheduler") -> Pod:
    return Pod.model_validate({
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "bench"}},
        "spec": {"schedulerName": scheduler_name, "containers": [{
            "name": "c", "image": "busybox", "resources": {"requests": {"cpu": f"{POD_CPU_MILLI}m",
                                                                       "memory": "64Mi"}}}]}})


async def bounded(n: int, concurrency: int, op: Any) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await op(i)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - start


async def register_nodes(client: RESTClient, count: int) -> list[Node]:
    async def one(i: int) -> None:
        await client.create(node(f"node-{i}", i % 3))
        await client.patch(Node, f"node-{i}", {"status": NODE_STATUS}, subresource="status")
    await bounded(count, 32, one)
    return (await client.list(Node)).items


def algorithm_rate(nodes: list[Node], pods: int) -> float:
    cache = SchedulerCache()
    for n in nodes:
        cache.add_node(n)
    algorithm = SchedulingAlgorithm(Framework(default_profile(), IN_TREE_REGISTRY))
    start = time.perf_counter()
    for i in range(pods):
        p = pod(f"p-{i}", "algo")
        host = algorithm.schedule(p, cache.node_infos()).suggested_host
        cache.assume_pod(p.model_copy(update={"spec": p.spec.model_copy(update={"node_name": host})}), host)
    return pods / (time.perf_counter() - start)


async def baseline_binds(client: RESTClient, nodes: list[Node], count: int, concurrency: int) -> float:
    ns = "bench-baseline"
    await client.create(Namespace.model_validate({"metadata": {"name": ns}}))
    await bounded(count, concurrency, lambda i: client.create(pod(f"b-{i}", ns, scheduler_name="nobody")))
    names = [n.metadata.name or "" for n in nodes]
    took = await bounded(count, 16, lambda i: client.bind(namespace=ns, name=f"b-{i}",
                                                          node_name=names[i % len(names)]))
    return count / took


class BoundWatch:
    """Counts pods of one namespace that a watch has seen bound."""

    def __init__(self, client: RESTClient, ns: str, want: int) -> None:
        self.client, self.ns, self.want = client, ns, want
        self.bound: set[str] = set()
        self.done = asyncio.Event()
        self.started = asyncio.Event()

    async def run(self) -> None:
        rv = await self._list()
        self.started.set()
        while True:
            try:
                async for ev in self.client.watch(Pod, self.ns, resource_version=rv):
                    rv = ev.resource_version or rv
                    if ev.object is not None and ev.object.spec.node_name:
                        self._saw_bound(ev.object)
            except ResourceExpired:
                rv = await self._list()
            except (httpx.TransportError, ApiError):
                continue  # the server ended the stream (a watcher it found too slow): resume from rv

    async def _list(self) -> str | None:
        listed = await self.client.list(Pod, self.ns)
        for p in listed.items:
            if p.spec.node_name:
                self._saw_bound(p)
        return listed.resource_version

    def _saw_bound(self, p: Pod) -> None:
        self.bound.add(p.metadata.name or "")
        if len(self.bound) >= self.want:
            self.done.set()


async def scheduler_run(api: ApiServerHarness, client: RESTClient, opts: argparse.Namespace,
                        metrics_file: Path, log: Path) -> tuple[float, dict[str, Any]]:
    argv = [sys.executable, "-m", "scheduler", "--kubeconfig", str(api.kubeconfig("scheduler")),
            "--metrics-file", str(metrics_file), "--log-level", "WARNING",
            # SIGSTOP would outlast its lease: a single scheduler needs no election here.
            "--leader-elect=false"]
    with log.open("wb") as out:
        # A plain Popen: the benchmark stops and resumes it with signals; starting it blocks only briefly.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)  # noqa: ASYNC220
    try:
        ns = "bench"
        await client.create(Namespace.model_validate({"metadata": {"name": ns}}))
        await client.create(pod("probe", "default"))

        async def probe_bound() -> bool:
            return bool((await client.get(Pod, "probe", "default")).spec.node_name)
        await eventually(probe_bound, timeout=120, message="the scheduler is running")
        proc.send_signal(signal.SIGSTOP)
        watch = BoundWatch(client, ns, opts.pods)
        task = asyncio.create_task(watch.run())
        await asyncio.wait_for(watch.started.wait(), 30)
        await bounded(opts.pods, opts.concurrency, lambda i: client.create(pod(f"p-{i}", ns)))
        start = time.perf_counter()
        proc.send_signal(signal.SIGCONT)
        await asyncio.wait_for(watch.done.wait(), 900)
        took = time.perf_counter() - start
        task.cancel()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        return opts.pods / took, json.loads(metrics_file.read_text())  # noqa: ASYNC240 - after the measurement
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()


async def overcommitted(client: RESTClient) -> int:
    per_node: dict[str, list[int]] = {}
    for p in (await client.list(Pod)).items:
        if p.spec.node_name:
            per_node.setdefault(p.spec.node_name, []).append(POD_CPU_MILLI)
    return sum(1 for cpus in per_node.values() if len(cpus) > NODE_PODS or sum(cpus) > NODE_CPU * 1000)


async def _run(api: ApiServerHarness, opts: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    async with api.client("admin") as client:
        nodes = await register_nodes(client, opts.nodes)
        algo = algorithm_rate(nodes, opts.pods)
        baseline = await baseline_binds(client, nodes, min(opts.pods, 2000), opts.concurrency)
        rate, metrics = await scheduler_run(api, client, opts, tmp / "scheduler-metrics.json",
                                            tmp / "scheduler.log")
        cycles = metrics["cycle_seconds"]
        return {
            "nodes": opts.nodes, "pods": opts.pods,
            "algorithm_decisions_per_s": round(algo, 1),
            "baseline_binds_per_s": round(baseline, 1),
            "scheduler_pods_per_s": round(rate, 1),
            "ratio": round(rate / baseline, 2),
            "cycle_p50_ms": round(cycles["p50"] * 1000, 2),
            "cycle_p99_ms": round(cycles["p99"] * 1000, 2),
            "attempts": metrics["attempts"],
            "overcommitted_nodes": await overcommitted(client),
        }


def run(opts: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        etcd = EtcdProcess(data_dir=Path(tmp) / "etcd").start()
        try:
            with ApiServerHarness(Path(tmp), etcd_endpoint=etcd.endpoint, nodes=()) as api:
                return asyncio.run(_run(api, opts, Path(tmp)))
        finally:
            etcd.stop()
