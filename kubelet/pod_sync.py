"""One pod's sync against the runtime: make what runs match the spec, or tear it down.

Mirrors kuberuntime_manager.go `SyncPod`/`KillPod` and the container restart rules:
- a pod gets one ready sandbox; a sandbox that stopped is replaced with `attempt + 1`;
- each spec container is found by its name label among the sandbox's containers; the
  newest instance counts. Missing: pull the image if absent (a failure shows as waiting
  `ErrImagePull`, then `ImagePullBackOff`), create and start it. Exited: restart it when
  the restart policy says so (`Always`; `OnFailure` for a non-zero exit) after the
  CrashLoopBackOff delay, 10 s doubling to 300 s, counted from when it exited;
- `kill()` stops every container with the pod's grace period, then stops and removes the
  sandbox. It is idempotent, so a resync may repeat it at no cost.
`sync()` returns the container views the status is computed from, and how long until the
pod needs another look (a pending back-off), or None.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from kube.api import Container, Pod
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.quantity import cpu_millis, to_int
from kubelet.cri.interface import (CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL,
                                   PortMappingSpec,
                                   CRIError, ContainerConfig, ContainerInfo, ContainerState, ImagePullError,
                                   PodSandbox, PodSandboxConfig, RuntimeService, SandboxState)
from kubelet.status import ContainerView

__all__ = ["PodSyncer", "SyncResult", "BACKOFF_INITIAL", "BACKOFF_MAX"]

logger = logging.getLogger(__name__)

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
BACKOFF_RESET = 600.0
"""A container that ran this long before exiting restarts after the initial delay again."""
IMAGE_BACKOFF_INITIAL = 1.0


@dataclass
class SyncResult:
    sandbox: PodSandbox | None
    views: list[ContainerView]
    retry_after: float | None = None


def _sandbox_config(pod: Pod, attempt: int) -> PodSandboxConfig:
    meta = pod.metadata
    labels = {POD_UID_LABEL: str(meta.uid), POD_NAME_LABEL: str(meta.name), POD_NAMESPACE_LABEL: str(meta.namespace)}
    ports = tuple(PortMappingSpec(container_port=p.container_port, host_port=p.host_port, protocol=p.protocol or "TCP",
                                  host_ip=p.host_ip or "")
                  for c in pod.spec.containers for p in c.ports or [] if p.host_port)
    return PodSandboxConfig(name=str(meta.name), namespace=str(meta.namespace), uid=str(meta.uid), attempt=attempt,
                            hostname=str(meta.name), labels=labels, host_network=bool(pod.spec.host_network),
                            port_mappings=ports)


def _resources(container: Container) -> dict[str, int]:
    """The container's cpu and memory as the cgroup limits a CRI runtime applies."""
    res = container.resources
    limits, requests = (res.limits or {}) if res else {}, (res.requests or {}) if res else {}
    cpu_request = requests.get("cpu", limits.get("cpu"))
    return {"cpu_limit_millis": cpu_millis(limits["cpu"]) if "cpu" in limits else 0,
            "cpu_request_millis": cpu_millis(cpu_request) if cpu_request is not None else 0,
            "memory_limit_bytes": to_int(limits["memory"]) if "memory" in limits else 0}


def _instances(containers: list[ContainerInfo], name: str) -> list[ContainerInfo]:
    """The runtime instances of spec container `name`, oldest attempt first."""
    return sorted((c for c in containers if c.labels.get(CONTAINER_NAME_LABEL) == name), key=lambda c: c.attempt)


def _view(name: str, image: str, mine: list[ContainerInfo]) -> ContainerView:
    return ContainerView(name, image, mine[-1] if mine else None, mine[-2] if len(mine) > 1 else None,
                         restart_count=mine[-1].attempt if mine else 0)


class PodSyncer:
    """Drives one runtime for every pod of the node; holds only back-off bookkeeping."""

    def __init__(self, runtime: RuntimeService, recorder: EventRecorder) -> None:
        self.runtime = runtime
        self.recorder = recorder
        self._image_failures: dict[tuple[str, str], tuple[int, float]] = {}  # (uid, container) -> (n, last)

    async def sandboxes_of(self, uid: str) -> list[PodSandbox]:
        found = await self.runtime.list_pod_sandbox(labels={POD_UID_LABEL: uid})
        return sorted(found, key=lambda s: (s.attempt, s.created_at))

    async def _ensure_sandbox(self, pod: Pod) -> PodSandbox:
        sandboxes = await self.sandboxes_of(str(pod.metadata.uid))
        latest = sandboxes[-1] if sandboxes else None
        if latest is not None and latest.state == SandboxState.READY:
            return latest
        attempt = latest.attempt + 1 if latest is not None else 0
        for old in sandboxes:
            await self.runtime.remove_pod_sandbox(old.id)
        sandbox_id = await self.runtime.run_pod_sandbox(_sandbox_config(pod, attempt))
        return await self.runtime.pod_sandbox_status(sandbox_id)

    async def sync(self, pod: Pod) -> SyncResult:
        """Bring the runtime in line with a live pod's spec; never raises for a container failure."""
        terminal = pod.status.phase in ("Succeeded", "Failed")
        if terminal:
            await self.kill(pod, grace=0, reason=None)
            return SyncResult(None, await self.views(pod, None))
        sandbox = await self._ensure_sandbox(pod)
        instances = await self.runtime.list_containers(pod_sandbox_id=sandbox.id)
        policy = pod.spec.restart_policy or "Always"
        views: list[ContainerView] = []
        retry: float | None = None
        now = time.time()
        for spec in pod.spec.containers:
            view = _view(spec.name, spec.image or "", _instances(instances, spec.name))
            views.append(view)
            cur = view.current
            if cur is not None and cur.state in (ContainerState.RUNNING, ContainerState.CREATED):
                continue
            if cur is not None and cur.state == ContainerState.EXITED:
                if policy == "Never" or (policy == "OnFailure" and cur.exit_code == 0):
                    continue
                ran = (cur.finished_at or now) - (cur.started_at or now)
                delay = BACKOFF_INITIAL if ran >= BACKOFF_RESET else min(BACKOFF_INITIAL * 2 ** cur.attempt,
                                                                          BACKOFF_MAX)
                wait = (cur.finished_at or now) + delay - now
                if wait > 0:
                    view.waiting_reason = "CrashLoopBackOff"
                    view.waiting_message = (f"back-off {int(delay)}s restarting failed container={spec.name} "
                                            f"pod={pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})")
                    retry = wait if retry is None else min(retry, wait)
                    continue
            wait = await self._start_container(pod, sandbox, spec.name, spec.image or "", view)
            if wait is not None:
                retry = wait if retry is None else min(retry, wait)
        # Re-read so the status shows what just started.
        fresh = await self.runtime.list_containers(pod_sandbox_id=sandbox.id)
        for view in views:
            mine = _instances(fresh, view.name)
            if mine:
                view.current, view.previous = mine[-1], (mine[-2] if len(mine) > 1 else None)
                view.restart_count = mine[-1].attempt
                if view.current.state != ContainerState.EXITED:
                    view.waiting_reason = view.waiting_reason if view.current.state == ContainerState.CREATED \
                        else None
        for view in views:  # keep at most the newest two instances of each container (for lastState)
            for stale in _instances(fresh, view.name)[:-2]:
                await self.runtime.remove_container(stale.id)
        return SyncResult(await self.runtime.pod_sandbox_status(sandbox.id), views, retry)

    async def _start_container(self, pod: Pod, sandbox: PodSandbox, name: str, image: str,
                               view: ContainerView) -> float | None:
        key = (str(pod.metadata.uid), name)
        if await self.runtime.image_status(image) is None:
            failures, last = self._image_failures.get(key, (0, 0.0))
            if failures:
                wait = last + min(IMAGE_BACKOFF_INITIAL * 2 ** (failures - 1), BACKOFF_MAX) - time.time()
                if wait > 0:
                    view.waiting_reason = "ImagePullBackOff"
                    view.waiting_message = f'Back-off pulling image "{image}"'
                    return wait
            self.recorder.event(pod, EVENT_NORMAL, "Pulling", f'Pulling image "{image}"')
            try:
                await self.runtime.pull_image(image)
            except ImagePullError as e:
                self._image_failures[key] = (failures + 1, time.time())
                view.waiting_reason, view.waiting_message = "ErrImagePull", str(e)
                self.recorder.event(pod, EVENT_WARNING, "Failed", f'Failed to pull image "{image}": {e}')
                return min(IMAGE_BACKOFF_INITIAL * 2 ** failures, BACKOFF_MAX)
            self._image_failures.pop(key, None)
            self.recorder.event(pod, EVENT_NORMAL, "Pulled", f'Successfully pulled image "{image}"')
        spec = next(c for c in pod.spec.containers if c.name == name)
        attempt = view.current.attempt + 1 if view.current is not None else 0
        labels = {POD_UID_LABEL: str(pod.metadata.uid), POD_NAME_LABEL: str(pod.metadata.name),
                  POD_NAMESPACE_LABEL: str(pod.metadata.namespace), CONTAINER_NAME_LABEL: name}
        config = ContainerConfig(name=name, image=image, command=tuple(spec.command or ()), args=tuple(spec.args or ()),
                                 env={e.name: e.value or "" for e in spec.env or []},
                                 working_dir=spec.working_dir or "", attempt=attempt, labels=labels,
                                 **_resources(spec))
        try:
            cid = await self.runtime.create_container(sandbox.id, config, _sandbox_config(pod, sandbox.attempt))
            self.recorder.event(pod, EVENT_NORMAL, "Created", f"Created container {name}")
            await self.runtime.start_container(cid)
        except CRIError as e:
            view.waiting_reason, view.waiting_message = "CreateContainerError", str(e)
            self.recorder.event(pod, EVENT_WARNING, "Failed", f"Error: {e}")
            return BACKOFF_INITIAL
        self.recorder.event(pod, EVENT_NORMAL, "Started", f"Started container {name}")
        if attempt and view.current is not None:
            self.recorder.event(pod, EVENT_WARNING, "BackOff", f"Back-off restarting failed container {name} in pod "
                                                              f"{pod.metadata.name}_{pod.metadata.namespace}")
        return None

    async def views(self, pod: Pod, sandbox: PodSandbox | None) -> list[ContainerView]:
        """Container views from whatever the runtime still holds for the pod."""
        instances: list[ContainerInfo] = []
        for sb in await self.sandboxes_of(str(pod.metadata.uid)):
            instances.extend(await self.runtime.list_containers(pod_sandbox_id=sb.id))
        return [_view(spec.name, spec.image or "", _instances(instances, spec.name)) for spec in pod.spec.containers]

    async def kill(self, pod: Pod, *, grace: float, reason: str | None = "Killing") -> None:
        """Stop every container (with `grace` seconds each), then stop and remove the sandboxes."""
        for sb in await self.sandboxes_of(str(pod.metadata.uid)):
            for c in await self.runtime.list_containers(pod_sandbox_id=sb.id):
                if c.state == ContainerState.RUNNING:
                    if reason:
                        self.recorder.event(pod, EVENT_NORMAL, reason, f"Stopping container {c.name}")
                    await self.runtime.stop_container(c.id, grace)
            await self.runtime.stop_pod_sandbox(sb.id)
        for key in [k for k in self._image_failures if k[0] == pod.metadata.uid]:
            self._image_failures.pop(key, None)

    async def remove(self, uid: str) -> None:
        """Remove everything the runtime holds for the pod `uid` (an orphan, or a deleted pod)."""
        for sb in await self.sandboxes_of(uid):
            await self.runtime.remove_pod_sandbox(sb.id)
