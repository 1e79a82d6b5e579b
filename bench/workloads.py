"""The controllers benchmark's Job and DaemonSet scenarios, and the hollow nodes the latter needs.

- A Job of `completions` pods, `parallelism` at a time, whose container is `sh -c "exit 0"`
  (the simulated runtime finishes it as soon as it starts): seconds from the create to the
  Job's `Complete` condition, and completions per second.
- A DaemonSet on `nodes` hollow nodes (`python -m kubelet --count`, one process, simulated
  runtime, as kubemark's): seconds from the create to every daemon pod created and to
  `status.numberReady` reaching `nodes`. The hollow nodes carry a label the DaemonSet selects
  and a NoSchedule taint only it tolerates, so the other scenarios' pods never land there
  and the cluster's own nodes get no daemon pod. As the hollow nodes' one process starts
  pods more slowly than the cluster's kubelets, the same number of bare pods with the daemon
  pod's spec (spread over the hollow nodes by the scheduler) is timed too, before the
  DaemonSet: the floor of this scenario.

Each scenario runs in a fresh namespace that is deleted (and waited for) afterwards, and
reports the controller-manager CPU seconds it cost.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from kube.api import DaemonSet, Job, Node
from kube.client import RESTClient
from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually

__all__ = ["DAEMON_POD_SPEC", "HOLLOW_LABEL", "add_arguments", "daemonset_run", "hollow_nodes", "job_run",
           "scenario_figures", "wait_hollow_ready"]

HOLLOW_LABEL = "bench.picokube.io/hollow"
_POLL = 0.2


def _job(name: str, ns: str, completions: int, parallelism: int) -> Job:
    return Job.model_validate({
        "metadata": {"name": name, "namespace": ns},
        "spec": {"completions": completions, "parallelism": parallelism, "backoffLimit": 6,
                 "template": {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                                       "containers": [{"name": "work", "image": "busybox:1.36",
                                                       "command": ["sh", "-c", "exit 0"]}]}}}})


DAEMON_POD_SPEC: dict[str, Any] = {
    "terminationGracePeriodSeconds": 0, "nodeSelector": {HOLLOW_LABEL: "true"},
    "tolerations": [{"key": HOLLOW_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
    "containers": [{"name": "agent", "image": "busybox:1.36"}]}
"""The daemon pod: on hollow nodes only. Also the spec of the bare pods of the hollow-node baseline."""


def _daemonset(name: str, ns: str) -> DaemonSet:
    return DaemonSet.model_validate({
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": DAEMON_POD_SPEC}}})


async def job_run(client: RESTClient, ns: str, completions: int, parallelism: int,
                  timeout: float) -> tuple[float, int]:
    """(seconds from create to the Complete condition, pods the Job counted as succeeded)."""
    start = time.monotonic()
    await client.create(_job("work", ns, completions, parallelism))

    async def complete() -> Job | None:
        job = await client.get(Job, "work", ns)
        conds = job.status.conditions or []
        return job if any(c.type == "Complete" and c.status == "True" for c in conds) else None

    job = await eventually(complete, timeout=timeout, interval=_POLL, message="job Complete")
    return time.monotonic() - start, job.status.succeeded or 0


async def daemonset_run(client: RESTClient, ns: str, nodes: int, timeout: float) -> tuple[float, float]:
    """(seconds from create to `nodes` pods scheduled, to `nodes` pods ready), from the DaemonSet's status."""
    start = time.monotonic()
    await client.create(_daemonset("agent", ns))
    scheduled: list[float] = []

    async def ready() -> bool:
        s = (await client.get(DaemonSet, "agent", ns)).status
        if not scheduled and s.current_number_scheduled >= nodes:
            scheduled.append(time.monotonic())
        return s.desired_number_scheduled == nodes and s.number_ready >= nodes

    await eventually(ready, timeout=timeout, interval=_POLL, message=f"daemonset ready on {nodes} nodes")
    done = time.monotonic()
    return (scheduled[0] if scheduled else done) - start, done - start


@contextlib.contextmanager
def hollow_nodes(cluster: Cluster, count: int) -> Iterator[subprocess.Popen[bytes]]:
    """`count` hollow nodes `hollow-1..N` in one kubelet process, stopped (SIGTERM) on exit."""
    log = (cluster.data_dir / "logs" / "hollow-nodes.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubelet", "--count", str(count), "--node-name-prefix", "hollow-",
         "--kubeconfig", str(cluster.kubeconfig), "--runtime", "simulated",
         "--node-labels", f"{HOLLOW_LABEL}=true", "--register-with-taints", f"{HOLLOW_LABEL}=true:NoSchedule",
         "--node-capacity", "cpu=8,memory=32Gi,pods=110", "--log-level", "WARNING"],
        stdout=log, stderr=subprocess.STDOUT, env=cluster.env())
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


async def wait_hollow_ready(client: RESTClient, count: int, timeout: float) -> float:
    """Seconds until `count` hollow Nodes are registered and Ready."""
    start = time.monotonic()

    async def ready() -> bool:
        listed = await client.list_all(Node, label_selector=f"{HOLLOW_LABEL}=true")
        return sum(1 for n in listed.items if (c := n.status.condition("Ready")) and c.status == "True") >= count

    await eventually(ready, timeout=timeout, interval=1.0, message=f"{count} hollow nodes Ready")
    return time.monotonic() - start


def scenario_figures(prefix: str, seconds: float, pods: int, baseline_running_s: float,
                     cpu: float) -> dict[str, Any]:
    """`<prefix>_s`, pods per second, and both set against the bare-pod baseline of the same size."""
    rate, base_rate = pods / seconds, pods / baseline_running_s
    return {f"{prefix}_s": round(seconds, 2), f"{prefix}_pods_per_s": round(rate, 1),
            f"{prefix}_vs_baseline_pods_per_s": round(rate / base_rate, 2),
            f"{prefix}_controller_manager_cpu_s": round(cpu, 2)}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--job-completions", type=int, default=1000, help="completions of the Job run")
    p.add_argument("--job-parallelism", type=int, default=100, help="parallelism of the Job run")
    p.add_argument("--daemonset-nodes", type=int, default=1000, help="hollow nodes of the DaemonSet run")
    p.add_argument("--node-monitor-grace-period", type=float, default=300.0,
                   help="the controller-manager's grace for node heartbeats in the benchmark's cluster: one "
                        "hollow process heartbeats every node, and on a small machine under load its Leases "
                        "can lag upstream's 40 s, which would mark nodes NotReady mid-run")
