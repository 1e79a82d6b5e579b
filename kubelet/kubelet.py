"""The kubelet: pods bound to this node in, running containers and pod status out.

Mirrors kubelet.go's sync loop, reduced to one asyncio process:
- a Pod informer with `fieldSelector=spec.nodeName=<node>` (or, for hollow nodes, one
  informer shared by every node of the process, see `pod_source`) feeds a work queue keyed by
  `namespace/name`; each key is reconciled by `PodSyncer` against the runtime, then the pod's
  status is computed from the runtime and merge-patched on pods/status when it differs;
- a PLEG-like relist every `relist_interval` compares the runtime's containers with the last
  relist and queues the pods whose containers changed (an exit, a start);
- a pod with `deletionTimestamp` is killed with its grace period, its final status is
  posted, its runtime objects removed, and the pod is deleted with grace 0 and its uid as a
  precondition: the last step of a graceful delete, which only the kubelet can take;
- housekeeping removes runtime sandboxes whose pod is no longer bound here (orphans).
Nothing persists in the kubelet: after a restart the informer's list and the runtime's list
rebuild everything, and pods are brought back in line by the same reconcile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from kube.api import Pod
from kube.cache import InformerFactory
from kube.client import RESTClient
from kube.clock import Clock, RealClock
from kube.controller import Request, Result, run_workers
from kube.errors import Conflict, NotFound
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.podutil import is_phase_terminal
from kube.tracing import attrs, child_span, current_hop
from kube.workqueue import WorkQueue
from kubelet.config import KubeletConfig
from kubelet.cri.interface import (
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    ContainerState,
    DNSConfig,
    RuntimeService,
)
from kubelet.dns import DNSConfigurer, parse_resolv_conf
from kubelet.local_volumes import LocalVolumeManager
from kubelet.node_status import NodeStatusManager
from kubelet.pod_objects import PodObjects
from kubelet.pod_source import PodRouter
from kubelet.pod_sync import PodSyncer, SyncResult
from kubelet.prober import ProbeKind, ProbeManager
from kubelet.status import compute_pod_status
from kubelet.volumes import VolumeManager

__all__ = ["Kubelet"]

_STUCK = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "CreateContainerError",
                    "CreateContainerConfigError", "CrashLoopBackOff", "RunContainerError"})
"""Waiting reasons that mean the pod cannot progress on its own: a kubelet hop records them as its reason."""

logger = logging.getLogger(__name__)

_STATUS_KEYS = ("phase", "conditions", "hostIP", "hostIPs", "podIP", "podIPs", "startTime", "containerStatuses",
                "initContainerStatuses", "ephemeralContainerStatuses", "qosClass")
_FULL_RESYNC = 10.0


def dns_configurer(config: KubeletConfig) -> DNSConfigurer:
    """The node's DNS settings; an unreadable `--resolv-conf` counts as an empty one (logged)."""
    host: DNSConfig | None = None
    if config.resolv_conf:
        try:
            host = parse_resolv_conf(Path(config.resolv_conf).read_text(errors="replace"))
        except OSError as e:
            logger.warning("Cannot read the resolver file, pods with dnsPolicy Default get none",
                           extra={"resolvConf": config.resolv_conf, "error": str(e)})
            host = DNSConfig()
    return DNSConfigurer(cluster_dns=config.cluster_dns, cluster_domain=config.cluster_domain, host=host)


def may_mount(config: KubeletConfig) -> bool:
    """Whether volumes may be tmpfs mounts: only for real containers, and only as root."""
    return config.runtime == "cri" and os.geteuid() == 0


class Kubelet:
    """One node's agent; `run()` until cancelled."""

    def __init__(self, config: KubeletConfig, client: RESTClient, runtime: RuntimeService, *,
                 runtime_name: str, runtime_version: str, kubelet_port: int = 0, clock: Clock | None = None,
                 router: PodRouter | None = None) -> None:
        """With `router`, pods come from a shared informer the caller runs; else from our own."""
        self.config = config
        self.client = client
        self.runtime = runtime
        self.runtime_name = runtime_name
        self.clock = clock or RealClock()
        self.factory: InformerFactory | None = None
        if router is None:
            self.factory = InformerFactory(client, clock=clock)
            router = PodRouter(self.factory.informer_for(Pod, field_selector=f"spec.nodeName={config.node_name}"))
        self.pods = router.register(config.node_name, self._enqueue)
        self.queue: WorkQueue[str] = WorkQueue(name="kubelet", clock=clock)
        self.recorder = EventRecorder(client, component="kubelet", host=config.node_name, clock=clock)
        self.syncer = PodSyncer(runtime, self.recorder, host_ip=config.address,
                                max_restart_period=config.max_container_restart_period, dns=dns_configurer(config),
                                objects=PodObjects(client), allocatable=config.allocatable or config.capacity,
                                volumes=VolumeManager(Path(config.root_dir), use_tmpfs=may_mount(config),
                                                      client=client))
        self.prober = ProbeManager(runtime, self._enqueue_key, simulated=config.runtime == "simulated",
                                   on_failure=self._probe_failed)
        self.node_status = NodeStatusManager(client, config, runtime_version=f"{runtime_name}://{runtime_version}",
                                             clock=clock)
        self.node_status.kubelet_port = kubelet_port
        self._relisted: dict[str, tuple[Any, ...]] = {}

    def _enqueue(self, pod: Pod) -> None:
        self.queue.add(pod.key)

    def _enqueue_key(self, key: str) -> None:
        self.queue.add(key)

    def _probe_failed(self, pod: Pod, container: str, kind: ProbeKind, message: str) -> None:
        self.recorder.event(pod, EVENT_WARNING, "Unhealthy", f"{kind.value} probe failed: {message}")

    async def run(self) -> None:
        logger.info("Starting kubelet", extra={"node": self.config.node_name, "runtime": self.runtime_name})
        await self.node_status.register()
        try:
            async with asyncio.TaskGroup() as tg:
                if self.factory is not None:
                    tg.create_task(self.factory.run())
                tg.create_task(self.recorder.run())
                tg.create_task(self.node_status.run())
                await self.pods.informer.wait_for_sync()
                logger.info("Pods synced", extra={"node": self.config.node_name, "pods": len(self.pods.list())})
                tg.create_task(run_workers(f"kubelet/{self.config.node_name}", self.queue, self.reconcile,
                                           self.config.workers, actor=f"kubelet/{self.config.node_name}",
                                           kind="Pod"))
                tg.create_task(self._relist_loop())
                tg.create_task(self._housekeeping_loop())
                if self.config.local_volume_dir:
                    tg.create_task(LocalVolumeManager(self.client, node_name=self.config.node_name,
                                                      volume_dir=self.config.local_volume_dir).run())
        finally:
            await self.prober.close()
            await self.queue.shut_down()

    # --- one pod ---------------------------------------------------------------------------
    async def reconcile(self, request: Request) -> Result | None:
        pod = self.pods.get(request.key)
        if pod is None:
            for sb in await self.runtime.list_pod_sandbox(labels={POD_NAMESPACE_LABEL: request.namespace,
                                                                  POD_NAME_LABEL: request.name}):
                await self.syncer.remove(sb.labels.get(POD_UID_LABEL, sb.uid))
            return None
        if pod.metadata.deletion_timestamp:
            await self._terminate(pod)
            return None
        result = await self.syncer.sync(pod)
        probed = any(c.readiness_probe or c.liveness_probe or c.startup_probe for c in pod.spec.containers)
        with child_span("probes") if probed else contextlib.nullcontext() as span:
            await self._apply_probes(pod, result)
            if span is not None:
                span.set_attribute("kubelet.not_ready_containers", [v.name for v in result.views if v.ready is False])
        status = compute_pod_status(pod, result.sandbox, result.views, runtime=self.runtime_name,
                                    host_ip=self.config.address, init_views=result.init_views,
                                    initialized=result.initialized, init_failed=result.init_failed,
                                    ephemeral_views=result.ephemeral_views)
        hop = current_hop()
        if hop is not None:
            hop.set_attribute("k8s.pod.phase", str(status.get("phase") or ""))
            stuck = [f"{v.name}: {v.waiting_reason}: {v.waiting_message or ''}".rstrip(": ")
                     for v in (*result.init_views, *result.views) if v.waiting_reason in _STUCK]
            if stuck:  # the pod waits on this node: the trace ends in why
                hop.set_attribute(attrs.REASON, "; ".join(stuck))
        await self._patch_status(pod, status)
        return Result(requeue_after=result.retry_after) if result.retry_after is not None else None

    async def _apply_probes(self, pod: Pod, result: SyncResult) -> None:
        """Start probing running containers, restart the ones whose liveness failed, set readiness."""
        running = {v.name: v.current.id for v in result.views
                   if v.current is not None and v.current.state == ContainerState.RUNNING}
        pod_ip = result.sandbox.ip if result.sandbox is not None else None
        self.prober.sync(pod, running, pod_ip)
        specs = {c.name: c for c in pod.spec.containers}
        for view in result.views:
            cid = running.get(view.name)
            spec = specs.get(view.name)
            if cid is None or spec is None:
                continue
            if self.prober.liveness_failed(cid):
                self.recorder.event(pod, EVENT_NORMAL, "Killing",
                                    f"Container {view.name} failed liveness probe, will be restarted")
                grace = pod.spec.termination_grace_period_seconds
                await self.runtime.stop_container(cid, float(30 if grace is None else grace))
                self.prober.forget_container(cid)
                self.queue.add(pod.key)  # the next sync restarts it by its restartPolicy
                view.ready = False
                continue
            view.ready = self.prober.ready(spec, cid)
            view.started = self.prober.started(spec, cid)

    async def _terminate(self, pod: Pod) -> None:
        meta = pod.metadata
        grace = meta.deletion_grace_period_seconds
        if grace is None:
            grace = pod.spec.termination_grace_period_seconds if pod.spec.termination_grace_period_seconds \
                is not None else 30
        await self.syncer.kill(pod, grace=float(grace))
        views = await self.syncer.views(pod, None)
        status = compute_pod_status(pod, None, views, runtime=self.runtime_name, host_ip=self.config.address,
                                    init_views=await self.syncer.views(pod, None, init=True),
                                    ephemeral_views=await self.syncer.views(pod, None, ephemeral=True))
        if not is_phase_terminal(status["phase"]):
            codes = [cs["state"].get("terminated", {}).get("exitCode", 0) for cs in status["containerStatuses"]]
            status["phase"] = "Failed" if any(codes) else "Succeeded"
        try:
            await self._patch_status(pod, status)
        except NotFound:
            pass
        await self.syncer.remove(str(meta.uid))
        try:
            await self.client.delete(Pod, str(meta.name), meta.namespace, grace_period_seconds=0, uid=meta.uid)
            logger.info("Pod deleted", extra={"pod": pod.key})
        except (NotFound, Conflict):
            pass  # already gone, or a new pod took the name: not ours to delete

    async def _patch_status(self, pod: Pod, status: dict[str, Any]) -> None:
        current = pod.to_dict().get("status") or {}
        if all(current.get(k) == status.get(k) for k in _STATUS_KEYS):
            return
        patch = {"status": {**{k: None for k in _STATUS_KEYS if k in current and k not in status}, **status}}
        await self.client.patch(Pod, str(pod.metadata.name), patch, pod.metadata.namespace, subresource="status")
        logger.debug("Pod status patched", extra={"pod": pod.key, "phase": status.get("phase")})

    # --- the runtime's side ----------------------------------------------------------------
    async def _relist_loop(self) -> None:
        while True:
            await self.clock.sleep(self.config.relist_interval)
            try:
                await self.relist()
            except Exception as e:  # noqa: BLE001 - a loop boundary: log and relist next period
                logger.warning("Relisting the runtime failed", extra={"error": repr(e)})

    async def relist(self) -> None:
        """Queue every pod whose containers or sandboxes changed since the last relist."""
        seen: dict[str, tuple[Any, ...]] = {}
        keys: dict[str, str] = {}
        for sb in await self.runtime.list_pod_sandbox():
            uid = sb.labels.get(POD_UID_LABEL, sb.uid)
            keys[uid] = f"{sb.namespace}/{sb.name}"
            seen.setdefault(uid, ())
            seen[uid] += (("sandbox", sb.id, sb.state),)
        containers = await self.runtime.list_containers(brief=True)
        self.prober.forget_containers({c.id for c in containers if c.state == ContainerState.RUNNING})
        for c in containers:
            uid = c.labels.get(POD_UID_LABEL, "")
            seen.setdefault(uid, ())
            seen[uid] += ((c.id, c.state),)
        for uid in seen.keys() | self._relisted.keys():
            if seen.get(uid) != self._relisted.get(uid) and uid in keys:
                self.queue.add(keys[uid])
        self._relisted = seen

    async def _housekeeping_loop(self) -> None:
        since_full = 0.0
        while True:
            await self.clock.sleep(self.config.housekeeping_interval)
            since_full += self.config.housekeeping_interval
            try:
                await self.housekeeping(full=since_full >= _FULL_RESYNC)
            except Exception as e:  # noqa: BLE001 - a loop boundary: log and retry next period
                logger.warning("Housekeeping failed", extra={"error": repr(e)})
            if since_full >= _FULL_RESYNC:
                since_full = 0.0

    async def housekeeping(self, *, full: bool = False) -> None:
        """Remove orphaned sandboxes; with `full`, queue every pod for a periodic resync."""
        bound = {str(p.metadata.uid) for p in self.pods.list()}
        for sb in await self.runtime.list_pod_sandbox():
            if sb.labels.get(POD_UID_LABEL, sb.uid) not in bound:
                logger.info("Removing orphaned sandbox", extra={"pod": f"{sb.namespace}/{sb.name}",
                                                                "sandbox": sb.id[:12]})
                await self.syncer.remove(sb.labels.get(POD_UID_LABEL, sb.uid))
        if full:
            for pod in self.pods.list():
                self.queue.add(pod.key)
