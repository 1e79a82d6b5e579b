"""Pod startup latency: from the create request to Running as a watch sees it, next to the CRI floor.

Runs a whole cluster with `picokube up` (`--runtime cri`: one node with its own containerd;
`--runtime simulated`: four simulated nodes) and measures:
- `startup_p50_s` / `startup_p99_s`: for `--pods` pods created at `--rate` pods per second
  (as upstream's density test paces them; 0 sends them all at once, `--concurrency` in
  flight), the time from sending each create to the watch event that shows it Running
  (Kubernetes' SLO: p99 <= 5 s excluding image pulls; the image here is always local);
- `cri_floor_p50_s` / `cri_floor_p99_s`, the baseline: RunPodSandbox + CreateContainer +
  StartContainer called directly on the same runtime, one pod at a time (with the simulated
  runtime: in-process); the difference is what the control plane and the kubelet add;
- `up_to_ready_s`: from running `picokube up --detach` to its return, when the API server
  answers and every node is Ready; `up_to_first_pod_running_s`: to one pod Running after that;
  next to the floors `etcd_alone_ready_s` (the same etcd binary started alone until it answers)
  and `python_imports_s` (a fresh interpreter importing the API server's modules), the part of
  a start no control plane in Python can avoid.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kube.api import Namespace, Pod
from kube.client import RESTClient, load_kubeconfig
from kube.testing.cluster import Cluster, start_cluster
from kube.testing.etcd import EtcdProcess
from kubelet.cri.interface import ContainerConfig, PodSandboxConfig, RuntimeService
from kubelet.cri.remote import RemoteRuntime
from kubelet.cri.simulated import SimulatedRuntime


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runtime", choices=["cri", "simulated"], default="simulated")
    p.add_argument("--pods", type=int, default=None, help="pods to start (default: 30 on cri, 1000 simulated)")
    p.add_argument("--concurrency", type=int, default=10)
    p.add_argument("--rate", type=float, default=None,
                   help="pods created per second (default: 5 on cri, 50 simulated; 0: all at once)")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def pod(name: str, ns: str) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns}, "spec": {
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                        "command": ["sleep", "3600"], "resources": {"requests": {"cpu": "10m"}}}]}})


async def startup_latencies(client: RESTClient, n: int, concurrency: int, rate: float) -> list[float]:
    ns = f"bench-startup-{uuid.uuid4().hex[:6]}"
    await client.create(Namespace.model_validate({"metadata": {"name": ns}}))
    sent: dict[str, float] = {}
    running: dict[str, float] = {}
    done = asyncio.Event()

    async def watch(started: asyncio.Event) -> None:
        listed = await client.list(Pod, ns)
        rv = listed.resource_version
        started.set()
        while True:
            async for ev in client.watch(Pod, ns, resource_version=rv):
                rv = ev.resource_version or rv
                p = ev.object
                if p is not None and p.status.phase == "Running" and p.metadata.name not in running:
                    running[p.metadata.name or ""] = time.perf_counter()
                    if len(running) >= n:
                        done.set()

    started = asyncio.Event()
    task = asyncio.create_task(watch(started))
    await started.wait()
    sem = asyncio.Semaphore(concurrency)

    begin = time.perf_counter()

    async def create(i: int) -> None:
        if rate > 0:
            await asyncio.sleep(max(0.0, begin + i / rate - time.perf_counter()))
        async with sem:
            name = f"p-{i}"
            sent[name] = time.perf_counter()
            await client.create(pod(name, ns))

    await asyncio.gather(*(create(i) for i in range(n)))
    await asyncio.wait_for(done.wait(), 600)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await client.delete(Namespace, ns, None)
    return [running[name] - sent[name] for name in sent]


async def cri_floor(runtime: RuntimeService, n: int) -> list[float]:
    """Sandbox + container start straight on the runtime, then removed again."""
    times: list[float] = []
    for i in range(n):
        uid = uuid.uuid4().hex
        sandbox = PodSandboxConfig(name=f"floor-{i}", namespace="bench", uid=uid, hostname=f"floor-{i}",
                                   labels={"io.kubernetes.pod.uid": uid})
        start = time.perf_counter()
        sid = await runtime.run_pod_sandbox(sandbox)
        cid = await runtime.create_container(sid, ContainerConfig(name="app", image="busybox",
                                                                  command=("sleep", "3600")), sandbox)
        await runtime.start_container(cid)
        times.append(time.perf_counter() - start)
        await runtime.stop_pod_sandbox(sid)
        await runtime.remove_pod_sandbox(sid)
    return times


@contextlib.contextmanager
def _cluster(opts: argparse.Namespace, tmp: Path) -> Iterator[Cluster]:
    if opts.runtime == "cri":
        yield from start_cluster(tmp, "--nodes", "1", "--runtime", "cri",
                                 "--node-capacity", f"cpu=64,memory=64Gi,pods={opts.pods + 10}")
    else:
        yield from start_cluster(tmp, "--nodes", "4", "--runtime", "simulated",
                                 "--node-capacity", f"cpu=1000,memory=1000Gi,pods={opts.pods // 4 + 20}")


async def first_pod_running(client: RESTClient) -> float:
    """Seconds from creating one pod to seeing it Running."""
    ns = f"bench-first-{uuid.uuid4().hex[:6]}"
    await client.create(Namespace.model_validate({"metadata": {"name": ns}}))
    rv = (await client.list(Pod, ns)).resource_version
    start = time.perf_counter()
    await client.create(pod("first", ns))
    took = float("nan")
    async for ev in client.watch(Pod, ns, resource_version=rv):
        if ev.object is not None and ev.object.status.phase == "Running":
            took = time.perf_counter() - start
            break
    await client.delete(Namespace, ns, None)
    return took


def etcd_alone_ready(tmp: Path) -> float:
    """The floor for a cluster start: etcd alone, from exec to answering."""
    start = time.perf_counter()
    etcd = EtcdProcess(data_dir=tmp / "etcd-floor").start()
    took = time.perf_counter() - start
    etcd.stop()
    return took


def python_imports() -> float:
    """The floor for any Python component: a fresh interpreter importing the API server's app."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import apiserver.app"], check=True)
    return time.perf_counter() - start


async def _run(cluster: Cluster, opts: argparse.Namespace, up_s: float) -> dict[str, Any]:
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        first_s = up_s + await first_pod_running(client)
        latencies = await startup_latencies(client, opts.pods, opts.concurrency, opts.rate)
    floor_pods = min(opts.pods, 30)
    if opts.runtime == "cri":
        node = cluster.data_dir / "containerd" / "node-1"
        runtime = RemoteRuntime(f"unix://{node / 'containerd.sock'}", log_root=node / "pods")
        kubelet = cluster.pid_of("kubelet-node-1")
        os.kill(kubelet, signal.SIGSTOP)  # its housekeeping would remove these sandboxes as orphans
        try:
            floor = await cri_floor(runtime, floor_pods)
        finally:
            os.kill(kubelet, signal.SIGCONT)
            await runtime.close()
    else:
        simulated = SimulatedRuntime(pod_cidr="10.250.0.0/16")
        await simulated.pull_image("busybox")
        floor = await cri_floor(simulated, floor_pods)
    return {"runtime": opts.runtime, "pods": opts.pods, "rate_pods_per_s": opts.rate,
            "up_to_ready_s": round(up_s, 3), "up_to_first_pod_running_s": round(first_s, 3),
            "startup_p50_s": round(pct(latencies, 0.5), 3), "startup_p99_s": round(pct(latencies, 0.99), 3),
            "startup_max_s": round(max(latencies), 3),
            "cri_floor_p50_s": round(pct(floor, 0.5), 3), "cri_floor_p99_s": round(pct(floor, 0.99), 3)}


def run(opts: argparse.Namespace) -> dict[str, Any]:
    if opts.pods is None:
        opts.pods = 30 if opts.runtime == "cri" else 1000
    if opts.rate is None:
        opts.rate = 5.0 if opts.runtime == "cri" else 50.0
    with tempfile.TemporaryDirectory() as tmp:
        floors = {"etcd_alone_ready_s": round(etcd_alone_ready(Path(tmp)), 3),
                  "python_imports_s": round(python_imports(), 3)}
        start = time.perf_counter()
        with _cluster(opts, Path(tmp) / "cluster") as cluster:
            up_s = time.perf_counter() - start
            return {**asyncio.run(_run(cluster, opts, up_s)), **floors}
