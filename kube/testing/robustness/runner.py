"""One robustness run against a cluster started by `picokube up`: load, faults, then every check.

Mirrors etcd's `tests/robustness/main_test.go`: start the load and the faults together,
stop them after `duration`, let the cluster settle, read etcd's own history of the
prefixes the clients used, and validate the recorded client histories against it. The
`RunReport` holds every violation (empty on success) and the figures the summary line
prints. Used by `tests/robustness/` and by `picokube chaos`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kube.client.config import load_kubeconfig
from kube.client.rest import RESTClient
from kube.errors import ResourceExpired
from kube.testing.robustness.etcd_gateway import EtcdGateway, cluster_gateway
from kube.testing.robustness.faults import Faults
from kube.testing.robustness.history import ObservedEvent
from kube.testing.robustness.recorders import Lister, Watcher, Writer, resource, summarize, until_no_problems
from kube.testing.robustness.state_checks import (
    check_cache_consistent,
    check_lists_not_stale,
    check_pods,
    check_revisions_increase,
    check_writes,
)
from kube.testing.robustness.watch_checks import check_resumable, check_watch_history
from kube.testing.robustness.workload import Rollouts, check_converged, deployment_manifest

__all__ = ["RunConfig", "RunReport", "run_once", "DEFAULT_COMPONENTS"]

DEFAULT_COMPONENTS = ("etcd", "apiserver", "controller-manager", "scheduler", "kubelet-node-1")


@dataclass(frozen=True)
class RunConfig:
    data_dir: Path
    seed: int
    duration: float = 60.0
    faults: int = 8
    components: tuple[str, ...] = DEFAULT_COMPONENTS
    namespace: str = ""
    watchers: int = 3
    settle_timeout: float = 180.0


@dataclass
class RunReport:
    seed: int
    faults: list[str] = field(default_factory=list)
    events_checked: int = 0
    writes_acknowledged: int = 0
    writes_lost: int = 0
    violations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"chaos seed={self.seed}: faults injected {len(self.faults)}, events checked {self.events_checked}, "
                f"writes acknowledged {self.writes_acknowledged}, writes lost {self.writes_lost}, "
                f"violations {len(self.violations)}")


async def _pids(data_dir: Path) -> dict[str, int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "picokube", "status", "-o", "json", "--data-dir", str(data_dir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await proc.communicate()
    return {c["name"]: int(c["pid"]) for c in json.loads(out)["components"] if c.get("alive")}


async def _status(data_dir: Path) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "picokube", "status", "-o", "json", "--data-dir", str(data_dir),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await proc.communicate()
    return dict(json.loads(out))


async def run_once(config: RunConfig, *, log: Callable[[str], None] = print) -> RunReport:
    """Run load and faults for `config.duration` seconds, then check; see the module docstring."""
    status = await _status(config.data_dir)
    run = _Run(config, RESTClient(load_kubeconfig(config.data_dir / "kubeconfig")),
               cluster_gateway(config.data_dir, status["etcd"][0]), log)
    try:
        return await run.execute()
    finally:
        await run.client.close()


class _Run:
    def __init__(self, config: RunConfig, client: RESTClient, gateway: EtcdGateway,
                 log: Callable[[str], None]) -> None:
        self.config, self.client, self.gateway, self.log = config, client, gateway, log
        self.rng = random.Random(config.seed)
        self.ns = config.namespace or f"chaos-{config.seed}"
        self.report = RunReport(config.seed)
        self.cm, self.pods, self.rs = resource("", "configmaps"), resource("", "pods"), resource("apps", "replicasets")

    async def execute(self) -> RunReport:
        self.log(f"chaos run: seed={self.config.seed} duration={self.config.duration}s faults={self.config.faults} "
                 f"namespace={self.ns}")
        await self.client.create_raw(resource("", "namespaces"),
                                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns}})
        await self.client.create_raw(resource("apps", "deployments"), deployment_manifest("web", replicas=4), self.ns)
        start = await self.gateway.current_revision()
        cm_ref: list[ObservedEvent] = []
        pod_ref: list[ObservedEvent] = []
        stop, final_rev = asyncio.Event(), {"cm": 0, "pods": 0}
        cm_prefix, pod_prefix = self.gateway.resource_prefix("configmaps", self.ns), self.gateway.resource_prefix(
            "pods", None)
        watchers = [Watcher(self.client, self.cm, name=f"configmaps-{i}", namespace=self.ns,
                            rng=random.Random(self.config.seed + i)) for i in range(self.config.watchers)]
        pod_watcher = Watcher(self.client, self.pods, name="pods", rng=random.Random(self.config.seed + 100))
        rs_watcher = Watcher(self.client, self.rs, name="replicasets", namespace=self.ns,
                             rng=random.Random(self.config.seed + 200))
        writer = Writer(self.client, self.cm, namespace=self.ns, keys=20, rng=random.Random(self.config.seed + 300))
        lister = Lister(self.client, self.cm, namespace=self.ns, gateway=self.gateway)
        rollouts = Rollouts(self.client, namespace=self.ns, name="web", rng=random.Random(self.config.seed + 400))
        faults = Faults(lambda: _pids(self.config.data_dir), components=self.config.components, rng=self.rng,
                        count=self.config.faults, duration=self.config.duration)
        async with asyncio.TaskGroup() as tg:
            refs = [tg.create_task(self.gateway.record(cm_prefix, after=start, summarize=summarize, into=cm_ref,
                                                       stop=stop, until=lambda: final_rev["cm"])),
                    tg.create_task(self.gateway.record(pod_prefix, after=start, summarize=summarize, into=pod_ref,
                                                       stop=stop, until=lambda: final_rev["pods"]))]
            watch_tasks = [tg.create_task(w.run()) for w in [*watchers, pod_watcher, rs_watcher]]
            load = [tg.create_task(t.run()) for t in (writer, lister, rollouts)]
            try:
                await faults.run()
                await asyncio.sleep(max(0.0, self.config.duration - (faults.injected[-1].at if faults.injected
                                                                     else 0)) / 4)
            finally:
                for t in load:
                    t.cancel()
            self.report.faults = [str(f) for f in faults.injected]
            self.log("\n".join(self.report.faults))
            self.report.violations += [f"not converged: {p}" for p in await until_no_problems(self._converged,
                                                                                   self.config.settle_timeout)]
            final_rev["cm"] = max([start, *(rev for _, rev, _ in (await self.gateway.range(cm_prefix))[1])])
            final_rev["pods"] = max([start, *(rev for _, rev, _ in (await self.gateway.range(pod_prefix))[1])])
            stop.set()
            await asyncio.wait_for(asyncio.gather(*refs), 60)
            for w in [*watchers, pod_watcher]:
                want = final_rev["pods" if w is pod_watcher else "cm"]
                self.report.violations += await until_no_problems(functools.partial(self._caught_up, w, want), 60)
            for t in watch_tasks:
                t.cancel()
        await self._check(start=start, cm_ref=cm_ref, pod_ref=pod_ref, final_cm=final_rev["cm"], watchers=watchers,
                          pod_watcher=pod_watcher, rs_watcher=rs_watcher, writer=writer, lister=lister,
                          faults=faults)
        self.report.violations += await self._clean_up()
        self.log(self.report.summary())
        return self.report

    async def _clean_up(self) -> list[str]:
        """Delete the run's namespace and wait for its pods to go, so a next run finds the nodes free."""
        await self.client.delete_raw(resource("", "namespaces"), self.ns)

        async def pods_left() -> list[str]:
            left = [p["metadata"]["name"] for p in (await self.client.list_raw(self.pods, self.ns))["items"]]
            return [f"namespace {self.ns} deleted, pods still there: {left}"] if left else []

        return await until_no_problems(pods_left, self.config.settle_timeout)

    async def _caught_up(self, w: Watcher, want: int) -> list[str]:
        got = w.history.segments[-1].last_revision if w.history.segments else 0
        return [] if got >= want else [f"{w.history.name} stuck at revision {got}, etcd at {want}"]

    async def _converged(self) -> list[str]:
        deployment = await self.client.get_raw(resource("apps", "deployments"), "web", self.ns)
        rss = (await self.client.list_raw(self.rs, self.ns))["items"]
        pods = (await self.client.list_raw(self.pods, self.ns))["items"]
        return check_converged(deployment, rss, pods)

    async def _check(self, *, start: int, cm_ref: list[ObservedEvent], pod_ref: list[ObservedEvent],
                     final_cm: int, watchers: list[Watcher], pod_watcher: Watcher, rs_watcher: Watcher,
                     writer: Writer, lister: Lister, faults: Faults) -> None:
        v = self.report.violations
        for w in watchers:
            v += check_watch_history(w.history, cm_ref, reference_start=start)
            v += check_revisions_increase(w.history.name, [e.revision for s in w.history.segments for e in s.events])
        v += check_watch_history(pod_watcher.history, pod_ref, reference_start=start)
        capacity = await self._capacity()
        max_replicas: dict[str, int] = {}
        for seg in rs_watcher.history.segments:
            for e in [*seg.initial, *seg.events]:
                if e.value:
                    max_replicas[e.key] = max(int(e.value), max_replicas.get(e.key, 0))
        v += check_pods(pod_watcher.history, capacity=capacity, max_replicas=max_replicas)
        _, items = await self.gateway.range(self.gateway.resource_prefix("configmaps", self.ns))
        final = {k: (str((o.get("data") or {}).get("v", "")), rev) for k, rev, o in items}
        lost = check_writes(writer.writes, final, cm_ref, reference_start=start)
        v += lost
        v += check_lists_not_stale(lister.consistent)
        await lister.compare_cache_with_etcd()
        for cached, stored in lister.cache_pairs:
            v += check_cache_consistent(cached, stored)
        v += await self._check_resumable(watchers[0], cm_ref, start=start, final=final_cm)
        v += await self._check_compacted_watch_expires(start, faults)
        self.report.events_checked = sum(w.history.event_count() for w in [*watchers, pod_watcher, rs_watcher])
        self.report.writes_acknowledged = sum(w.acknowledged for w in writer.writes)
        self.report.writes_lost = len(lost)

    async def _capacity(self) -> dict[str, int]:
        nodes = (await self.client.list_raw(resource("", "nodes")))["items"]
        return {n["metadata"]["name"]: int((n.get("status") or {}).get("capacity", {}).get("pods", 110))
                for n in nodes}

    async def _check_resumable(self, w: Watcher, reference: list[ObservedEvent], *, start: int,
                               final: int) -> list[str]:
        revisions = sorted({e.revision for s in w.history.segments for e in s.events})
        picks = [start, *self.rng.sample(revisions, min(3, len(revisions)))]
        resumed = {}
        for rev in picks:
            try:
                resumed[rev] = await w.watch_from(rev, until=final)
            except ResourceExpired:
                continue
        return check_resumable(resumed, reference, reference_start=start)

    async def _check_compacted_watch_expires(self, start: int, faults: Faults) -> list[str]:
        """Once etcd compacted past `start`, what no cache holds any more answers 410 Gone (Expired).

        A LIST at exactly `start` is read from etcd; a watch from `start` is served from the
        API server's event window while it holds that revision (as kube-apiserver's cacher
        does), so it is asked after an API server restart emptied the window.
        """
        await self.gateway.compact(await self.gateway.current_revision())
        problems = []
        try:
            await self.client.request("GET", self.cm.base_path(self.ns),
                                      params={"resourceVersion": str(start), "resourceVersionMatch": "Exact"})
            problems.append(f"a LIST at compacted revision {start} did not answer 410 Gone")
        except ResourceExpired:
            pass
        await faults.inject("apiserver", "SIGKILL")
        probe = Watcher(self.client, self.cm, name="after-compaction", namespace=self.ns, rng=self.rng)
        with contextlib.suppress(TimeoutError):
            try:
                await probe.watch_from(start, until=start + 10**9, timeout=60)
            except ResourceExpired:
                return problems
        return [*problems, f"a watch from compacted revision {start} did not answer 410 Gone"]
