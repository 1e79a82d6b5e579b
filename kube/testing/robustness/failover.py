"""Failover rounds against an HA cluster (`picokube up --etcd-members 3 --apiservers 2 ...`).

The scenario issue 25 asks for, shared by `tests/e2e/test_ha.py` and `python -m bench
failover`: a Deployment is rolled out and scaled while a `Writer` (the robustness suite's)
writes ConfigMaps through the balancer, and each round takes members away:

1. `kill`: SIGKILL the etcd leader and one API server (the supervisor restarts both);
2. `stop`: SIGSTOP the (new) etcd leader, the other API server and the leading
   controller-manager, then SIGCONT; the standby controller-manager must take the Lease over;
3. `stop-follower`: SIGSTOP an etcd follower and the first API server.

In each round a rollout and a scale are asked for at once, and the round records how long
until the Deployment has converged (`check_converged`) with the members still gone, how
many writes were acknowledged meanwhile and the longest stretch without one. A round lasts
at least `hold` seconds from the fault, so each one measures the writes of the same span.
Before the rounds the same rollout on the whole cluster gives the floor. At the end every
acknowledged write must be stored (`check_writes` against etcd's own history). Stopped
processes always get SIGCONT, also when the run fails.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import signal
import ssl
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from kube.client.config import load_kubeconfig
from kube.client.rest import RESTClient
from kube.testing.robustness.etcd_gateway import cluster_gateway
from kube.testing.robustness.history import ObservedEvent, Write
from kube.testing.robustness.recorders import TRANSIENT, Writer, resource, summarize, until_no_problems
from kube.testing.robustness.state_checks import check_writes
from kube.testing.robustness.workload import check_converged, deployment_manifest

__all__ = ["FailoverReport", "RoundFigures", "etcd_leader", "run_failover"]

NAMESPACE, DEPLOYMENT = "failover", "web"
LEASE_NAMESPACE, CM_LEASE = "kube-system", "kube-controller-manager"


@dataclass
class RoundFigures:
    name: str
    stopped: list[str]
    rollout_seconds: float = 0.0
    writes_acknowledged: int = 0
    writes_attempted: int = 0
    longest_write_gap_seconds: float = 0.0
    cm_leader_before: str = ""
    cm_leader_after: str = ""


@dataclass
class FailoverReport:
    floor_rollout_seconds: float = 0.0
    rounds: list[RoundFigures] = field(default_factory=list)
    writes_acknowledged: int = 0
    violations: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"floor_rollout_seconds": round(self.floor_rollout_seconds, 2),
                "rounds": [{"name": r.name, "stopped": r.stopped, "rollout_seconds": round(r.rollout_seconds, 2),
                            "writes_acknowledged": r.writes_acknowledged, "writes_attempted": r.writes_attempted,
                            "longest_write_gap_seconds": round(r.longest_write_gap_seconds, 2),
                            "controller_manager_leader": [r.cm_leader_before, r.cm_leader_after]}
                           for r in self.rounds],
                "writes_acknowledged": self.writes_acknowledged, "violations": self.violations}


def _status(data_dir: Path) -> dict[str, Any]:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "picokube", "status", "-o", "json", "--data-dir", str(data_dir)],
                         check=True, capture_output=True, text=True, timeout=30)
    return dict(json.loads(out.stdout))


async def _alive_pids(data_dir: Path) -> dict[str, int]:
    status = await asyncio.to_thread(_status, data_dir)
    return {c["name"]: int(c["pid"]) for c in status["components"] if c.get("alive") and c.get("pid")}


def etcd_leader(data_dir: Path, urls: list[str]) -> tuple[int, dict[int, str]]:
    """(index of the leader among `urls`, or -1; each answering member's raft id by index).

    Asks each member's maintenance status over its client port with the health-check
    certificate, as `etcdctl endpoint status` does. A stopped member does not answer.
    """
    pki = data_dir / "pki" / "etcd"
    ids: dict[int, str] = {}
    leader = ""
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "healthcheck-client.crt"), str(pki / "healthcheck-client.key"))
    with httpx.Client(verify=context, timeout=2.0) as http:
        for i, url in enumerate(urls):
            try:
                body = http.post(f"{url}/v3/maintenance/status", json={}).json()
            except (httpx.HTTPError, ValueError):
                continue
            ids[i] = str(body["header"]["member_id"])
            leader = str(body.get("leader") or leader)
    return next((i for i, member in ids.items() if member == leader), -1), ids


def _cm_identities(data_dir: Path) -> dict[str, str]:
    """Each controller-manager's leader-election identities (one per restart), from its log."""
    found = {}
    for log in (data_dir / "logs").glob("controller-manager*.log"):
        text = log.read_text(errors="replace")
        for match in re.finditer(r"lease=kube-system/kube-controller-manager identity=(\S+)", text):
            found[match.group(1)] = log.stem
    return found


class _Failover:
    def __init__(self, data_dir: Path, client: RESTClient, *, hold: float, log: Callable[[str], None]) -> None:
        self.data_dir, self.client, self.hold, self.log = data_dir, client, hold, log
        self.report = FailoverReport()
        self.deployments = resource("apps", "deployments")
        self.rollouts = 0
        self.stopped: list[int] = []

    async def converged(self) -> list[str]:
        deployment = await self.client.get_raw(self.deployments, DEPLOYMENT, NAMESPACE)
        rss = (await self.client.list_raw(resource("apps", "replicasets"), NAMESPACE))["items"]
        pods = (await self.client.list_raw(resource("", "pods"), NAMESPACE))["items"]
        return check_converged(deployment, rss, pods)

    async def roll(self, replicas: int, timeout: float) -> float:
        """Ask for a new template and `replicas` at once; seconds until converged (a violation past timeout)."""
        self.rollouts += 1
        patch = {"spec": {"replicas": replicas,
                          "template": {"metadata": {"annotations": {"rollout": str(self.rollouts)}}}}}
        start = time.monotonic()
        while True:
            try:
                await self.client.patch_raw(self.deployments, DEPLOYMENT, patch, NAMESPACE)
                break
            except TRANSIENT:
                if time.monotonic() - start > timeout:
                    raise
                await asyncio.sleep(0.5)
        problems = await until_no_problems(self.converged, max(1.0, timeout - (time.monotonic() - start)),
                                          interval=0.5)
        if problems:
            self.report.violations.append(f"rollout {self.rollouts} did not complete in {timeout:.0f}s: {problems}")
        return time.monotonic() - start

    async def cm_leader(self) -> str:
        lease = await self.client.get_raw(resource("coordination.k8s.io", "leases"), CM_LEASE, LEASE_NAMESPACE)
        holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
        return (await asyncio.to_thread(_cm_identities, self.data_dir)).get(holder, holder)

    async def run(self, writer: Writer) -> None:
        status = await asyncio.to_thread(_status, self.data_dir)
        etcd_names = [c["name"] for c in status["components"] if c["name"].startswith("etcd")]
        urls = list(status["etcd"])
        apiservers = sorted(c["name"] for c in status["components"]
                            if re.fullmatch(r"apiserver-\d+", c["name"]))
        self.report.floor_rollout_seconds = await self.roll(3, timeout=120)
        self.log(f"floor: rollout with every member up took {self.report.floor_rollout_seconds:.1f}s")
        writer_task = asyncio.create_task(writer.run(), name="writer")
        try:
            leader, _ = await asyncio.to_thread(etcd_leader, self.data_dir, urls)
            await self.round("kill", signal.SIGKILL, [etcd_names[leader], apiservers[0]], writer, replicas=4)
            leader, _ = await asyncio.to_thread(etcd_leader, self.data_dir, urls)
            cm = await self.cm_leader()
            await self.round("stop", signal.SIGSTOP, [etcd_names[leader], apiservers[-1], cm], writer,
                             replicas=2, takeover=True)
            leader, _ = await asyncio.to_thread(etcd_leader, self.data_dir, urls)
            follower = next(n for i, n in enumerate(etcd_names) if i != leader)
            await self.round("stop-follower", signal.SIGSTOP, [follower, apiservers[0]], writer, replicas=3)
        finally:
            writer_task.cancel()
            await asyncio.gather(writer_task, return_exceptions=True)

    async def round(self, name: str, sig: signal.Signals, targets: list[str], writer: Writer, *, replicas: int,
                    takeover: bool = False) -> None:
        figures = RoundFigures(name, targets)
        figures.cm_leader_before = await self.cm_leader()
        pids = await _alive_pids(self.data_dir)
        before = len(writer.writes), sum(w.acknowledged for w in writer.writes)
        self.log(f"round {name}: {sig.name} {', '.join(f'{t} (pid {pids[t]})' for t in targets)}")
        start = time.monotonic()
        try:
            for t in targets:
                os.kill(pids[t], sig)
                if sig == signal.SIGSTOP:
                    self.stopped.append(pids[t])
            figures.rollout_seconds = await self.roll(replicas, timeout=150)
            if takeover:
                problems = await until_no_problems(self._leader_changed(figures.cm_leader_before), 60, interval=0.5)
                self.report.violations += [f"round {name}: {p}" for p in problems]
            await asyncio.sleep(max(0.0, self.hold - (time.monotonic() - start)))
        finally:
            self.resume()
        end = time.monotonic()
        figures.cm_leader_after = await self.cm_leader()
        figures.writes_attempted = len(writer.writes) - before[0]
        figures.writes_acknowledged = sum(w.acknowledged for w in writer.writes) - before[1]
        figures.longest_write_gap_seconds = longest_gap(writer.writes[before[0]:], start, end)
        self.log(f"round {name}: rollout completed in {figures.rollout_seconds:.1f}s with {', '.join(targets)} "
                 f"gone; {figures.writes_acknowledged} of {figures.writes_attempted} writes acknowledged, "
                 f"at most {figures.longest_write_gap_seconds:.1f}s without one; "
                 f"controller-manager leader {figures.cm_leader_before} -> {figures.cm_leader_after}")
        self.report.rounds.append(figures)
        # Killed members are back before the next round.
        problems = await until_no_problems(self._all_alive(), 90, interval=0.5)
        self.report.violations += [f"after round {name}: {p}" for p in problems]

    def _leader_changed(self, before: str) -> Callable[[], Coroutine[Any, Any, list[str]]]:
        async def check() -> list[str]:
            now = await self.cm_leader()
            return [] if now and now != before else [f"controller-manager Lease still held by {now}"]
        return check

    def _all_alive(self) -> Callable[[], Coroutine[Any, Any, list[str]]]:
        async def check() -> list[str]:
            status = await asyncio.to_thread(_status, self.data_dir)
            down = [c["name"] for c in status["components"] if not c.get("alive")]
            return [f"not alive: {down}"] if down else []
        return check

    def resume(self) -> None:
        for pid in self.stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.stopped.clear()


def longest_gap(writes: list[Write], start: float, end: float) -> float:
    """The longest stretch of [start, end] in which no write was acknowledged."""
    times = [start, *sorted(w.answered for w in writes if w.acknowledged and start <= w.answered <= end), end]
    return max(b - a for a, b in itertools.pairwise(times))


async def run_failover(data_dir: Path, *, hold: float = 20.0, seed: int = 25,
                       log: Callable[[str], None] = print) -> FailoverReport:
    """Run the rounds (module docstring) on the cluster `picokube up` runs for `data_dir`.

    etcd's own history of the ConfigMaps, recorded from a member over its client port, is
    the reference the acknowledged writes are checked against.
    """
    client = RESTClient(load_kubeconfig(data_dir / "kubeconfig"), timeout=10.0)
    run = _Failover(data_dir, client, hold=hold, log=log)
    status = await asyncio.to_thread(_status, data_dir)
    gateway = cluster_gateway(data_dir, status["etcd"][0])
    prefix = gateway.resource_prefix("configmaps", NAMESPACE)
    reference: list[ObservedEvent] = []
    stop, final_revision = asyncio.Event(), [0]
    try:
        await _create(client)
        start = await gateway.current_revision()
        recorder = asyncio.create_task(gateway.record(prefix, after=start, summarize=summarize, into=reference,
                                                      stop=stop, until=lambda: final_revision[0]))
        writer = Writer(client, resource("", "configmaps"), namespace=NAMESPACE, keys=50, rng=random.Random(seed))
        try:
            await run.run(writer)
            _, items = await gateway.range(prefix)
            final = {key: (str((obj.get("data") or {}).get("v")), rev) for key, rev, obj in items}
            final_revision[0] = max([start, *(rev for _, rev, _ in items)])
            stop.set()
            await asyncio.wait_for(recorder, 60)
        finally:
            recorder.cancel()
        run.report.violations += check_writes(writer.writes, final, reference, reference_start=start,
                                              late_unacknowledged=True)
        run.report.writes_acknowledged = sum(w.acknowledged for w in writer.writes)
        return run.report
    finally:
        run.resume()
        await client.close()


async def _create(client: RESTClient) -> None:
    namespaces = resource("", "namespaces")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    for info, obj, ns in ((namespaces, body, None),
                          (resource("apps", "deployments"), deployment_manifest(DEPLOYMENT, replicas=2), NAMESPACE)):
        await client.create_raw(info, obj, ns)
