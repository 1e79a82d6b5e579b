"""Streaming: port-forward throughput and exec round trips, next to their floors in the same run.

What runs: `picokube up --runtime cri` with one node (its own containerd, real containers) in
a private network namespace (`bench._netns`), and one busybox pod whose httpd serves a
`--size-mib` file of zeros. Then:

- throughput: `curl` downloads the file `--rounds` times straight from the pod IP (the
  floor: the container's network and httpd) and through `kubectl port-forward` (curl →
  kubectl → the API server → the kubelet → containerd's streaming server → the pod). The
  figure is the best round's MiB/s of each, and their ratio;
- exec round trip: `--execs` runs of `true` through pods/exec (one WebSocket each, as pkctl
  exec makes: TLS, authentication, authorization, the relay to the kubelet, CRI Exec, the
  relay to containerd's streaming server, the exit status back), against the same command
  by CRI ExecSync straight to the node's containerd (the floor: what the runtime costs).
  p50 and p99 of each.

curl and kubectl are compiled clients; the server side measured is ours. Needs root,
containerd, runc and the CNI plugins.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench._netns import enter_private_netns
from bench._ready_traffic import pct
from kube.client import load_kubeconfig
from kube.client.websocket import connect_websocket
from kube.testing.cluster import Cluster, start_cluster
from kube.testing.eventually import eventually_sync
from kube.testing.ports import free_port
from kubelet.cri.remote import RemoteRuntime
from picokube.config import ClusterConfig
from picokube.containerd import containerd_available

NS = "bench-streaming"
ERROR_CHANNEL = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size-mib", type=int, default=256, help="size of the file downloaded in each round")
    p.add_argument("--rounds", type=int, default=3, help="downloads of each kind (the best counts)")
    p.add_argument("--execs", type=int, default=100, help="exec round trips of each kind")


@contextlib.contextmanager
def _cluster(data_dir: Path) -> Iterator[Cluster]:
    yield from start_cluster(data_dir, "--nodes", "1", "--runtime", "cri")


def _server_pod(size_mib: int) -> dict[str, Any]:
    serve = f"mkdir -p /www && head -c {size_mib * 1024 * 1024} /dev/zero > /www/big && exec httpd -f -p 8080 -h /www"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "server", "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [{
                "name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", serve],
                # Ready once httpd listens, which is after the whole file is written.
                "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}}


def _running(cluster: Cluster) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        pod: dict[str, Any] = json.loads(cluster.kubectl_ok("get", "pod", "server", "-n", NS, "-o", "json"))
        statuses = pod["status"].get("containerStatuses") or [{}]
        return pod if all(c.get("ready") for c in statuses) and pod["status"].get("podIP") else None
    return eventually_sync(ready, timeout=180, interval=0.5, message="the server pod Ready")


def _download(url: str, size: int) -> float:
    """MiB/s of one curl download of `url` (which must be `size` bytes)."""
    out = subprocess.run(["curl", "-s", "--noproxy", "*", "-o", "/dev/null", "-w", "%{size_download} %{time_total}",
                          url], check=True, capture_output=True, text=True, timeout=600).stdout.split()
    got, seconds = int(out[0]), float(out[1])
    if got != size:
        raise RuntimeError(f"{url}: {got} bytes downloaded, {size} expected")
    return size / (1024 * 1024) / seconds


def _best(url: str, size: int, rounds: int) -> float:
    return max(_download(url, size) for _ in range(rounds))


def _port_forward_throughput(cluster: Cluster, size: int, rounds: int) -> float:
    port = free_port()
    proc = subprocess.Popen(["kubectl", "--kubeconfig", str(cluster.kubeconfig), "port-forward", "-n", NS,
                             "pod/server", f"{port}:8080"], env=cluster.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/big"
        eventually_sync(lambda: subprocess.run(["curl", "-s", "--noproxy", "*", "-o", "/dev/null", "-r", "0-0", url],
                                               check=False).returncode == 0,
                        timeout=30, interval=0.3, message="port-forward listening")
        return _best(url, size, rounds)
    finally:
        proc.kill()
        proc.wait()


async def _exec_once(cluster: Cluster) -> float:
    config = load_kubeconfig(str(cluster.kubeconfig))
    started = time.perf_counter()
    ws = await connect_websocket(config, f"/api/v1/namespaces/{NS}/pods/server/exec",
                                 [("command", "true"), ("stdout", "true")],
                                 ("v5.channel.k8s.io", "v4.channel.k8s.io"))
    try:
        status = b""
        while (frame := await ws.receive()) is not None:
            if frame[0] == ERROR_CHANNEL:
                status += frame[1]
        if json.loads(status or b"{}").get("status") != "Success":
            raise RuntimeError(f"exec failed: {status!r}")
    finally:
        await ws.close()
    return time.perf_counter() - started


async def _exec_sync_once(runtime: RemoteRuntime, container_id: str) -> float:
    started = time.perf_counter()
    code, _ = await runtime.exec_sync(container_id, ["true"], 10)
    if code != 0:
        raise RuntimeError(f"ExecSync exited {code}")
    return time.perf_counter() - started


async def _exec_latencies(cluster: Cluster, container_id: str, execs: int) -> dict[str, float]:
    endpoint, logs = ClusterConfig(data_dir=cluster.data_dir, runtime="cri").cri_endpoint("node-1")
    runtime = RemoteRuntime(endpoint, log_root=logs)
    try:
        await _exec_once(cluster)  # warm: the first exec pays for connections and imports
        through = [await _exec_once(cluster) for _ in range(execs)]
        direct = [await _exec_sync_once(runtime, container_id) for _ in range(execs)]
    finally:
        await runtime.close()
    return {"exec_p50_ms": round(pct(through, 0.5) * 1000, 1), "exec_p99_ms": round(pct(through, 0.99) * 1000, 1),
            "cri_exec_sync_p50_ms": round(pct(direct, 0.5) * 1000, 1),
            "cri_exec_sync_p99_ms": round(pct(direct, 0.99) * 1000, 1)}


def run(opts: argparse.Namespace) -> dict[str, Any]:
    private = enter_private_netns()
    problem = (f"no private network namespace: {private}" if private else containerd_available()) or (
        None if shutil.which("curl") else "curl is not installed")
    if problem:
        raise SystemExit(f"bench streaming needs real containers: {problem}")
    size = opts.size_mib * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp, _cluster(Path(tmp)) as cluster:
        cluster.kubectl_ok("create", "namespace", NS)
        cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(_server_pod(opts.size_mib)))
        pod = _running(cluster)
        direct = _best(f"http://{pod['status']['podIP']}:8080/big", size, opts.rounds)
        forwarded = _port_forward_throughput(cluster, size, opts.rounds)
        container_id = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
        latencies = asyncio.run(_exec_latencies(cluster, container_id, opts.execs))
    return {"file_mib": opts.size_mib, "pod_ip_mib_per_s": round(direct, 1),
            "port_forward_mib_per_s": round(forwarded, 1), "port_forward_vs_pod_ip": round(forwarded / direct, 3),
            **latencies}
