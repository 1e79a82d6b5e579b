"""Controller throughput: Deployments to created and Running pods, a rolling update, CPU per pod.

Runs a whole cluster with `picokube up` (simulated runtime, `--nodes` kubelets large enough
for every pod) and measures, each in a fresh namespace that is emptied afterwards:

- baseline: the same number of bare pods POSTed by a client at 32 in flight, to created and
  to Running; this is the floor the API server, scheduler and kubelets set;
- a 100- and a 1000-replica Deployment: seconds from the create to all pods created and to
  all Running, and the ratio to the baseline of the same size;
- a full rolling update of 100 replicas (default 25% surge / 25% unavailable): seconds
  from `set image` to every replica updated and available;
- controller-manager CPU seconds (user + system, from /proc) per 1000 pods created;
- tracing's cost: the `--tracing-size` Deployment (after its bare-pod baseline, so every
  cluster is equally warm) on fresh clusters started with `--no-tracing` and `--tracing`,
  alternating for `--tracing-rounds` pairs; the overhead compares the medians of each side:
  time to created and to Running, controller-manager CPU and the CPU of every component but
  etcd, as a percentage;
- a Job run to completion and a DaemonSet on hollow nodes (see `bench.workloads`), each set
  against the bare-pod baseline of its size taken in the same run.

`--only` picks scenarios (deployments, rolling, tracing, job, daemonset); all run by default.

Progress is followed through one pod watch, so the measuring itself adds no LIST load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import workloads
from bench._wrk import cpu_seconds
from kube.api import Deployment, Namespace, Pod
from kube.client import RESTClient, load_kubeconfig
from kube.errors import NotFound
from kube.testing.cluster import Cluster, start_cluster
from kube.testing.eventually import eventually

SCENARIOS = ("deployments", "rolling", "tracing", "job", "daemonset")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", default="100,1000", help="replica counts of the create runs")
    p.add_argument("--rolling", type=int, default=100, help="replicas of the rolling-update run")
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds allowed for one run")
    p.add_argument("--tracing-size", type=int, default=1000,
                   help="replicas of the tracing on/off comparison (0: skip it)")
    p.add_argument("--tracing-rounds", type=int, default=3,
                   help="on/off pairs of the comparison, each on fresh clusters; medians are reported")
    p.add_argument("--only", default=",".join(SCENARIOS), help=f"scenarios to run, of {','.join(SCENARIOS)}")
    workloads.add_arguments(p)


def selected(opts: argparse.Namespace, scenario: str) -> bool:
    return scenario in {s.strip() for s in opts.only.split(",")}


_POD_SPEC: dict[str, Any] = {"terminationGracePeriodSeconds": 0,
                             "containers": [{"name": "app", "image": "busybox:1.36"}]}


def deployment(name: str, ns: str, replicas: int) -> Deployment:
    return Deployment.model_validate({
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": _POD_SPEC}}})


class PodCounter:
    """Counts a namespace's live pods and Running ones from a watch; records when targets are hit."""

    def __init__(self, client: RESTClient, ns: str) -> None:
        self.client, self.ns = client, ns
        self.phase: dict[str, str] = {}
        self.changed = asyncio.Event()

    @property
    def created(self) -> int:
        return len(self.phase)

    @property
    def running(self) -> int:
        return sum(1 for p in self.phase.values() if p == "Running")

    async def run(self, started: asyncio.Event) -> None:
        listed = await self.client.list(Pod, self.ns)
        rv = listed.resource_version
        self.phase = {p.metadata.name or "": p.status.phase or "" for p in listed.items}
        started.set()
        while True:
            async for ev in self.client.watch(Pod, self.ns, resource_version=rv):
                rv = ev.resource_version or rv
                if ev.object is None:
                    continue
                name = ev.object.metadata.name or ""
                if ev.type == "DELETED" or ev.object.metadata.deletion_timestamp is not None:
                    self.phase.pop(name, None)
                else:
                    self.phase[name] = ev.object.status.phase or ""
                self.changed.set()

    async def until(self, ok: Any, timeout: float) -> float:
        """Wait until `ok(self)` holds; the monotonic time it first did."""
        deadline = time.monotonic() + timeout
        while not ok(self):
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"pods: {self.created} created, {self.running} Running")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return time.monotonic()


@contextlib.asynccontextmanager
async def counting(client: RESTClient, ns: str) -> Any:
    counter = PodCounter(client, ns)
    started = asyncio.Event()
    task = asyncio.create_task(counter.run(started))
    try:
        await asyncio.wait_for(started.wait(), 30)
        yield counter
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def fresh_namespace(client: RESTClient, name: str) -> str:
    await client.create(Namespace.model_validate({"metadata": {"name": name}}))
    return name


async def empty_namespace(client: RESTClient, ns: str, timeout: float) -> None:
    """Delete the namespace and wait until it is gone with all its pods."""
    await client.delete(Namespace, ns, None)

    async def gone() -> bool:
        try:
            await client.get(Namespace, ns, None)
        except NotFound:
            return True
        return False
    await eventually(gone, timeout=timeout, interval=0.5, message=f"namespace {ns} deleted")


async def bare_pods(client: RESTClient, n: int, opts: argparse.Namespace, spec: dict[str, Any] | None = None,
                    ns_prefix: str = "bench-pods") -> tuple[float, float]:
    ns = await fresh_namespace(client, f"{ns_prefix}-{n}")
    sem = asyncio.Semaphore(32)

    async def create(i: int) -> None:
        async with sem:
            await client.create(Pod.model_validate({"metadata": {"name": f"pod-{i}", "namespace": ns},
                                                    "spec": spec or _POD_SPEC}))

    async with counting(client, ns) as counter:
        start = time.monotonic()
        await asyncio.gather(*(create(i) for i in range(n)))
        created = await counter.until(lambda c: c.created >= n, opts.timeout)
        running = await counter.until(lambda c: c.running >= n, opts.timeout)
    await empty_namespace(client, ns, opts.timeout)
    return created - start, running - start


def _component_pids(cluster: Cluster) -> dict[str, int]:
    """Every control-plane and node process of the cluster (not etcd): name -> pid."""
    return {c["name"]: int(c["pid"]) for c in cluster.status()["components"] if c.get("pid") and c["name"] != "etcd"}


async def deployment_run(client: RESTClient, cluster: Cluster, n: int,
                         opts: argparse.Namespace) -> tuple[float, float, float, float]:
    """(created s, Running s, controller-manager CPU s, CPU s of every component but etcd)."""
    ns = await fresh_namespace(client, f"bench-deploy-{n}")
    pids = _component_pids(cluster)
    async with counting(client, ns) as counter:
        before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        start = time.monotonic()
        await client.create(deployment("web", ns, n))
        created = await counter.until(lambda c: c.created >= n, opts.timeout)
        running = await counter.until(lambda c: c.running >= n, opts.timeout)
        used = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    await empty_namespace(client, ns, opts.timeout)
    return created - start, running - start, used["controller-manager"], sum(used.values())


async def rolling_update(client: RESTClient, n: int, opts: argparse.Namespace) -> float:
    ns = await fresh_namespace(client, f"bench-rolling-{n}")
    async with counting(client, ns) as counter:
        await client.create(deployment("web", ns, n))
        await counter.until(lambda c: c.running >= n, opts.timeout)

    async def complete() -> bool:
        d = await client.get(Deployment, "web", ns)
        s = d.status
        return (s.observed_generation or 0) >= (d.metadata.generation or 0) and s.updated_replicas == n \
            and s.replicas == n and s.available_replicas == n

    await eventually(complete, timeout=opts.timeout, interval=0.2, message="deployment available")
    start = time.monotonic()
    await client.patch(Deployment, "web", {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "busybox:1.37"}]}}}}, ns)
    await eventually(complete, timeout=opts.timeout, interval=0.2, message="rolling update complete")
    took = time.monotonic() - start
    await empty_namespace(client, ns, opts.timeout)
    return took


async def _run(cluster: Cluster, opts: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    sizes = [int(s) for s in opts.sizes.split(",") if s]
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        cpu_per_1000: list[float] = []
        baselines: dict[int, tuple[float, float]] = {}

        async def baseline(n: int) -> tuple[float, float]:
            if n not in baselines:
                baselines[n] = await bare_pods(client, n, opts)
                figures[f"baseline_pods_{n}_created_s"] = round(baselines[n][0], 2)
                figures[f"baseline_pods_{n}_running_s"] = round(baselines[n][1], 2)
                figures[f"baseline_pods_{n}_pods_per_s"] = round(n / baselines[n][1], 1)
            return baselines[n]

        for n in sizes if selected(opts, "deployments") else []:
            base_created, base_running = await baseline(n)
            created, running, cpu, _ = await deployment_run(client, cluster, n, opts)
            figures[f"deployment_{n}_created_s"] = round(created, 2)
            figures[f"deployment_{n}_running_s"] = round(running, 2)
            figures[f"deployment_{n}_created_ratio"] = round(created / base_created, 2)
            figures[f"deployment_{n}_running_ratio"] = round(running / base_running, 2)
            figures[f"controller_manager_cpu_s_{n}"] = round(cpu, 2)
            cpu_per_1000.append(cpu * 1000 / n)
        if cpu_per_1000:
            figures["controller_manager_cpu_s_per_1000_pods"] = round(max(cpu_per_1000), 2)
        if opts.rolling and selected(opts, "rolling"):
            figures[f"rolling_update_{opts.rolling}_s"] = round(await rolling_update(client, opts.rolling, opts), 2)
        if opts.job_completions and selected(opts, "job"):
            figures.update(await job_scenario(client, cluster, opts, (await baseline(opts.job_completions))[1]))
        if opts.daemonset_nodes and selected(opts, "daemonset"):
            figures.update(await daemonset_scenario(client, cluster, opts, (await baseline(opts.daemonset_nodes))[1]))
    return figures


async def job_scenario(client: RESTClient, cluster: Cluster, opts: argparse.Namespace,
                       base_running: float) -> dict[str, Any]:
    n = opts.job_completions
    ns = await fresh_namespace(client, f"bench-job-{n}")
    pid = cluster.pid_of("controller-manager")
    before = cpu_seconds(pid)
    took, succeeded = await workloads.job_run(client, ns, n, opts.job_parallelism, opts.timeout)
    cpu = cpu_seconds(pid) - before
    await empty_namespace(client, ns, opts.timeout)
    figures = workloads.scenario_figures(f"job_{n}_complete", took, n, base_running, cpu)
    figures[f"job_{n}_succeeded"] = succeeded
    return figures


async def daemonset_scenario(client: RESTClient, cluster: Cluster, opts: argparse.Namespace,
                             base_running: float) -> dict[str, Any]:
    n = opts.daemonset_nodes
    with workloads.hollow_nodes(cluster, n):
        registered = await workloads.wait_hollow_ready(client, n, opts.timeout)
        _, hollow_running = await bare_pods(client, n, opts, workloads.DAEMON_POD_SPEC, "bench-hollow-pods")
        ns = await fresh_namespace(client, f"bench-daemonset-{n}")
        pid = cluster.pid_of("controller-manager")
        before = cpu_seconds(pid)
        scheduled, ready = await workloads.daemonset_run(client, ns, n, opts.timeout)
        cpu = cpu_seconds(pid) - before
        await empty_namespace(client, ns, opts.timeout)
    figures = workloads.scenario_figures(f"daemonset_{n}_ready", ready, n, base_running, cpu)
    figures[f"daemonset_{n}_scheduled_s"] = round(scheduled, 2)
    figures[f"hollow_nodes_{n}_ready_s"] = round(registered, 2)
    figures[f"hollow_baseline_pods_{n}_running_s"] = round(hollow_running, 2)
    figures[f"daemonset_{n}_ready_vs_hollow_baseline"] = round(ready / hollow_running, 2)
    return figures


Side = tuple[float, float, float, float]


async def _deployment_only(cluster: Cluster, n: int, opts: argparse.Namespace) -> Side:
    """The bare-pod warm-up then one Deployment of `n` (see `deployment_run`)."""
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        await bare_pods(client, n, opts)
        return await deployment_run(client, cluster, n, opts)


def _overhead(on: float, off: float) -> float:
    return round((on - off) / off * 100, 1) if off > 0 else 0.0


def _tracing_figures(on: list[Side], off: list[Side], n: int) -> dict[str, Any]:
    """Medians over the rounds of each side, and the overhead of the medians."""
    figures: dict[str, Any] = {"tracing_rounds": len(on)}
    for i, label in enumerate(("created_s", "running_s", "cpu_s", "all_cpu_s")):
        a, b = statistics.median(r[i] for r in on), statistics.median(r[i] for r in off)
        figures[f"tracing_on_{n}_{label}"] = round(a, 2)
        figures[f"tracing_off_{n}_{label}"] = round(b, 2)
        figures[f"tracing_overhead_{n}_{label.removesuffix('_s')}_pct"] = _overhead(a, b)
    return figures


@contextlib.contextmanager
def _cluster(opts: argparse.Namespace, *extra: str) -> Iterator[Cluster]:
    most = max([int(s) for s in opts.sizes.split(",") if s] + [opts.tracing_size, opts.job_completions,
                                                                opts.daemonset_nodes])
    per_node = most // opts.nodes + opts.rolling + 20
    with tempfile.TemporaryDirectory() as tmp:
        yield from start_cluster(Path(tmp), "--nodes", str(opts.nodes), "--runtime", "simulated",
                                 "--node-capacity", f"cpu=1000,memory=1000Gi,pods={per_node}",
                                 "--node-monitor-grace-period", str(opts.node_monitor_grace_period), *extra)


def run(opts: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    if any(selected(opts, s) for s in SCENARIOS if s != "tracing"):
        with _cluster(opts) as cluster:
            figures.update(asyncio.run(_run(cluster, opts)))
    n = opts.tracing_size
    if n and selected(opts, "tracing"):
        # each run on a fresh cluster, the sides alternating so drifting load hits both alike
        on: list[Side] = []
        off: list[Side] = []
        for _ in range(max(1, opts.tracing_rounds)):
            for flag, runs in (("--no-tracing", off), ("--tracing", on)):
                with _cluster(opts, flag) as cluster:
                    runs.append(asyncio.run(_deployment_only(cluster, n, opts)))
        figures.update(_tracing_figures(on, off, n))
    return figures
