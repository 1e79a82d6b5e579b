"""`bench services`, part two: from a pod turning Ready to its first connection through the ClusterIP.

What runs: `picokube up --runtime cri` with one node (its own containerd, real containers,
its proxy programming iptables) in the network namespace this process runs in (the caller
makes it a private one, so nothing here touches the host's rules or bridges). One Service
selects the benchmark's pods; each trial starts with it having no endpoint (its cluster IP
refuses connections, the proxy's REJECT rule), then:

1. a busybox pod is created whose httpd answers its own name at once, and whose readiness
   probe (`test -e /tmp/ready`, every second) passes once the container has made that file,
   `ready_after` seconds after it started: so the pod first appears in the Service's slice
   not ready, then turns Ready, which is the change measured;
2. a pod watch sees the Ready condition turn True: that instant is the start (the condition's
   `lastTransitionTime` has whole seconds only);
3. from then on two pollers connect from this host every 10 ms: to the pod IP directly (the
   floor: the pod answers, so this is the polling and connecting itself) and to the cluster
   IP, each until an HTTP answer carries this pod's name;
4. the pod is deleted (no grace period) and the trial ends when the cluster IP refuses again.

The figures are p50 and p99 over the trials of each poller's wait: the cluster IP's is the
EndpointSlice controller, the proxy's min-sync-period coalescing and its iptables-restore.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from kube.client import RESTClient, load_kubeconfig
from kube.resources import ResourceInfo, resource_for_kind
from kube.testing.cluster import Cluster, start_cluster
from kube.testing.eventually import eventually

__all__ = ["measure_ready_to_traffic", "pct"]

LABELS = {"app": "bench-ready"}
SERVE = ("mkdir -p /tmp/www && hostname > /tmp/www/index.html; "
         '(sleep "$READY_AFTER"; touch /tmp/ready) & exec httpd -f -p 8080 -h /tmp/www')
POLL_INTERVAL = 0.01


def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None, kind
    return found


PODS, SERVICES, NAMESPACES = _info("v1", "Pod"), _info("v1", "Service"), _info("v1", "Namespace")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def pod(name: str, ready_after: float) -> dict[str, Any]:
    probe = {"exec": {"command": ["test", "-e", "/tmp/ready"]}, "periodSeconds": 1, "failureThreshold": 1}
    return {"metadata": {"name": name, "labels": LABELS}, "spec": {
        "terminationGracePeriodSeconds": 0, "containers": [{
            "name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent", "command": ["sh", "-c", SERVE],
            "env": [{"name": "READY_AFTER", "value": str(ready_after)}], "readinessProbe": probe,
            "ports": [{"name": "http", "containerPort": 8080}]}]}}


SERVICE = {"metadata": {"name": "ready"},
           "spec": {"selector": LABELS, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}}


async def answers(ip: str, port: int, want: str) -> bool:
    """Whether an HTTP GET to ip:port is answered by the pod named `want`."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(ip, port), 0.5)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(b"GET / HTTP/1.0\r\n\r\n")
        body = await asyncio.wait_for(reader.read(), 1.0)
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
    return body.decode(errors="replace").strip().endswith(want)


async def refused(ip: str, port: int) -> bool:
    """Whether a connection to ip:port is refused (the proxy's REJECT rule: no endpoint)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(ip, port), 0.5)
    except ConnectionRefusedError:
        return True
    except (OSError, TimeoutError):
        return False
    writer.close()
    return False


async def first_answer(ip: str, port: int, want: str, *, timeout: float) -> float:
    """Poll until `want` answers at ip:port; the monotonic time it first did."""
    deadline = time.monotonic() + timeout
    while not await answers(ip, port, want):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{want} not reached at {ip}:{port} within {timeout}s")
        await asyncio.sleep(POLL_INTERVAL)
    return time.monotonic()


class ReadyWatch:
    """When a watch first saw each pod of a namespace Ready, and its IP."""

    def __init__(self, client: RESTClient, ns: str) -> None:
        self.client, self.ns = client, ns
        self.ready: dict[str, tuple[float, str]] = {}
        self.changed = asyncio.Event()

    async def run(self, started: asyncio.Event) -> None:
        rv = (await self.client.list_raw(PODS, self.ns))["metadata"]["resourceVersion"]
        started.set()
        while True:
            async for ev in self.client.watch_raw(PODS, self.ns, resource_version=rv):
                obj = ev["object"]
                rv = obj["metadata"].get("resourceVersion") or rv
                status, name = obj.get("status") or {}, obj["metadata"]["name"]
                if name not in self.ready and status.get("podIP") and any(
                        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ()):
                    self.ready[name] = (time.monotonic(), status["podIP"])
                    self.changed.set()

    async def wait(self, name: str, timeout: float) -> tuple[float, str]:
        async with asyncio.timeout(timeout):
            while name not in self.ready:
                self.changed.clear()
                await self.changed.wait()
        return self.ready[name]


@contextlib.asynccontextmanager
async def watching(client: RESTClient, ns: str) -> AsyncIterator[ReadyWatch]:
    watch, started = ReadyWatch(client, ns), asyncio.Event()
    task = asyncio.create_task(watch.run(started))
    try:
        await asyncio.wait_for(started.wait(), 30)
        yield watch
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def trial(client: RESTClient, watch: ReadyWatch, ns: str, name: str, cluster_ip: str,
                ready_after: float) -> tuple[float, float]:
    """One pod from created to reached; (direct, through the cluster IP) seconds after Ready."""
    await client.create_raw(PODS, pod(name, ready_after), ns)
    ready_at, pod_ip = await watch.wait(name, timeout=120)
    direct, via_service = await asyncio.gather(first_answer(pod_ip, 8080, name, timeout=60),
                                               first_answer(cluster_ip, 80, name, timeout=60))
    await client.delete_raw(PODS, name, ns, grace_period_seconds=0)
    await eventually(lambda: refused(cluster_ip, 80), timeout=60, interval=0.1,
                     message=f"{name} gone from the Service's rules")
    return direct - ready_at, via_service - ready_at


async def _measure(cluster: Cluster, trials: int, ready_after: float) -> dict[str, Any]:
    ns = "bench-ready"
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        await client.create_raw(NAMESPACES, {"metadata": {"name": ns}})
        cluster_ip = str((await client.create_raw(SERVICES, SERVICE, ns))["spec"]["clusterIP"])
        await eventually(lambda: refused(cluster_ip, 80), timeout=60, message="the Service programmed, no endpoint")
        direct, via_service = [], []
        async with watching(client, ns) as watch:
            for i in range(trials):
                d, s = await trial(client, watch, ns, f"ready-{i}", cluster_ip, ready_after)
                direct.append(d)
                via_service.append(s)
    return {"traffic_runtime": "cri", "trials": trials,
            "ready_to_cluster_ip_p50_s": round(pct(via_service, 0.5), 3),
            "ready_to_cluster_ip_p99_s": round(pct(via_service, 0.99), 3),
            "ready_to_pod_ip_p50_s": round(pct(direct, 0.5), 3),
            "ready_to_pod_ip_p99_s": round(pct(direct, 0.99), 3)}


@contextlib.contextmanager
def _cri_cluster(tmp: Path) -> Iterator[Cluster]:
    yield from start_cluster(tmp, "--nodes", "1", "--runtime", "cri")


def measure_ready_to_traffic(*, trials: int, ready_after: float) -> dict[str, Any]:
    """Run part two on a fresh one-node CRI cluster; its figures."""
    with tempfile.TemporaryDirectory() as tmp, _cri_cluster(Path(tmp)) as cluster:
        return asyncio.run(_measure(cluster, trials, ready_after))
