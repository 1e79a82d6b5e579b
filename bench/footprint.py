"""Memory footprint: each component's resident set idle, and holding a 1000-replica Deployment.

Runs a whole cluster with `picokube up` (simulated runtime, `--nodes` kubelets sized for every
pod) and reads each process's RSS from /proc:
- `rss_idle_mib_<component>`: once every node is Ready and nothing else has happened;
- `rss_loaded_mib_<component>`: with `--pods` replicas of one Deployment Running (after the
  same number of bare pods came and went, as the controllers benchmark does, so caches and
  histories hold churn too);
- `rss_floor_mib`, the baseline: a fresh interpreter that has imported the API server's
  modules and done nothing, which every Python component pays before holding any object.
The difference between a component's figure and the floor is what its state costs.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.controllers import bare_pods, counting, deployment, empty_namespace, fresh_namespace
from kube.client import RESTClient, load_kubeconfig
from kube.testing.cluster import Cluster, start_cluster


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pods", type=int, default=1000, help="replicas of the Deployment held")
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds allowed for one run")
    p.add_argument("--no-tracing", action="store_true",
                   help="run the cluster without tracing, to see what the API server's span store holds")


def rss_mib(pid: int) -> float:
    """The process's resident set in MiB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def floor_mib() -> float:
    """RSS of an interpreter that imported the API server's app and nothing more."""
    out = subprocess.run([sys.executable, "-c", "import apiserver.app, pathlib;"
                          "print(next(l for l in pathlib.Path('/proc/self/status').read_text().splitlines()"
                          " if l.startswith('VmRSS:')).split()[1])"], check=True, capture_output=True, text=True)
    return round(int(out.stdout) / 1024, 1)


def footprint(cluster: Cluster, label: str) -> dict[str, float]:
    return {f"rss_{label}_mib_{c['name']}": rss_mib(int(c["pid"]))
            for c in cluster.status()["components"] if c.get("pid") and c.get("alive")}


async def _hold(cluster: Cluster, opts: argparse.Namespace) -> dict[str, Any]:
    async with RESTClient(load_kubeconfig(cluster.kubeconfig)) as client:
        await bare_pods(client, opts.pods, opts, ns_prefix="bench-footprint-pods")
        ns = await fresh_namespace(client, "bench-footprint")
        async with counting(client, ns) as counter:
            await client.create(deployment("held", ns, opts.pods))
            await counter.until(lambda c: c.running >= opts.pods, opts.timeout)
            figures = footprint(cluster, "loaded")
        await empty_namespace(client, ns, opts.timeout)
    return figures


def run(opts: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {"pods": opts.pods, "rss_floor_mib": floor_mib()}
    per_node = opts.pods // opts.nodes + 20
    with tempfile.TemporaryDirectory() as tmp:
        for cluster in start_cluster(Path(tmp), "--nodes", str(opts.nodes), "--runtime", "simulated",
                                     "--node-capacity", f"cpu=1000,memory=1000Gi,pods={per_node}",
                                     *(("--no-tracing",) if opts.no_tracing else ())):
            figures.update(footprint(cluster, "idle"))
            figures.update(asyncio.run(_hold(cluster, opts)))
    return figures
