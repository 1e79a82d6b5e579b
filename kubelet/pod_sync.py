"""One pod's sync against the runtime: make what runs match the spec, or tear it down.

Mirrors kuberuntime_manager.go `SyncPod`/`KillPod` and the container restart rules:
- a pod gets one ready sandbox; a sandbox that stopped is replaced with `attempt + 1`;
- each spec container is found by its name label among the sandbox's containers; the
  newest instance counts. Missing: pull the image if absent (a failure shows as waiting
  `ErrImagePull`, then `ImagePullBackOff`), create and start it. Exited: restart it when
  the restart policy says so (`Always`; `OnFailure` for a non-zero exit) after the
  CrashLoopBackOff delay, 10 s doubling to 300 s, counted from when it exited;
- `kill()` stops every container with the pod's grace period, then stops and removes the
  sandbox. It is idempotent, so a resync may repeat it at no cost;
- ephemeral containers (kuberuntime_manager.go computePodActions) start once each in the
  pod's running sandbox, even before initialization completes, and are never restarted: one
  that has an instance in any of the pod's sandboxes is left as it is. With
  `targetContainerName` it joins the target's process namespace (CRI pid TARGET), so it
  waits for the target to run.
- before the sandbox, the pod's volumes are set up or refreshed (`kubelet.volumes`); while
  one is missing for a pod that never ran, the pod stays ContainerCreating with FailedMount
  events; a finished pod's volumes are torn down;
- each container's environment (`kubelet.envvars`) and mounts are resolved when it is
  created; a missing ConfigMap, Secret or key leaves it waiting in CreateContainerConfigError.
`sync()` returns the container views the status is computed from, and how long until the
pod needs another look (a pending back-off), or None.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from kube.api import Container, EphemeralContainer, Pod
from kube.errors import ApiError
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.podutil import is_pod_terminal
from kube.quantity import cpu_millis, to_int
from kube.tracing import child_span, note_waiting
from kubelet.cri.interface import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    ContainerConfig,
    ContainerInfo,
    ContainerState,
    CRIError,
    DNSConfig,
    ImagePullError,
    PodSandbox,
    PodSandboxConfig,
    PortMappingSpec,
    RuntimeService,
    SandboxState,
)
from kubelet.dns import DNSConfigurer
from kubelet.downward_api import field_value
from kubelet.envvars import ContainerConfigError, EnvContext, expand_command, make_environment
from kubelet.hostname import pod_hostname
from kubelet.pod_objects import PodObjects
from kubelet.service_links import ServiceEnvironment
from kubelet.status import ContainerView
from kubelet.volumes import MountedVolume, PayloadContext, VolumeManager

__all__ = ["BACKOFF_INITIAL", "BACKOFF_MAX", "PodSyncer", "SyncResult"]

logger = logging.getLogger(__name__)

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
BACKOFF_RESET = 600.0
"""A container that ran this long before exiting restarts after the initial delay again."""
IMAGE_BACKOFF_INITIAL = 1.0
CONFIG_RETRY = 3.0
"""How soon a container whose ConfigMap, Secret or key was missing is tried again."""
MOUNT_RETRY = 3.0
"""How soon a pod whose volumes could not be set up is tried again."""

SANDBOX_RETRY = 10.0
"""How soon a pod whose sandbox could not be created is tried again."""


@dataclass
class SyncResult:
    sandbox: PodSandbox | None
    views: list[ContainerView]
    retry_after: float | None = None
    init_views: list[ContainerView] = field(default_factory=list)
    initialized: bool = True
    """Every init container has exited 0 (vacuously true without any)."""
    init_failed: bool = False
    """An init container failed and restartPolicy Never forbids another try: the pod fails."""
    ephemeral_views: list[ContainerView] = field(default_factory=list)


def _sandbox_config(pod: Pod, attempt: int, dns_config: DNSConfig | None = None) -> PodSandboxConfig:
    meta = pod.metadata
    labels = {POD_UID_LABEL: str(meta.uid), POD_NAME_LABEL: str(meta.name), POD_NAMESPACE_LABEL: str(meta.namespace)}
    ports = tuple(PortMappingSpec(container_port=p.container_port, host_port=p.host_port, protocol=p.protocol or "TCP",
                                  host_ip=p.host_ip or "")
                  for c in pod.spec.containers for p in c.ports or [] if p.host_port)
    return PodSandboxConfig(name=str(meta.name), namespace=str(meta.namespace), uid=str(meta.uid), attempt=attempt,
                            hostname=pod_hostname(str(meta.name), _spec_hostname(pod)), labels=labels,
                            host_network=bool(pod.spec.host_network), port_mappings=ports, dns_config=dns_config)


def _spec_hostname(pod: Pod) -> str | None:
    return pod.spec.hostname or None


def container_env(pod: Pod, container: Container, sandbox: PodSandbox, host_ip: str) -> dict[str, str]:
    """The container's literal and `fieldRef` variables (no API reads; see `kubelet.envvars` for all)."""
    env: dict[str, str] = {}
    for e in container.env or []:
        ref = e.value_from.field_ref if e.value_from is not None else None
        env[e.name] = field_value(pod, ref.field_path, pod_ip=sandbox.ip, host_ip=host_ip) if ref is not None \
            else e.value or ""
    return env


class _Resources(TypedDict):
    cpu_limit_millis: int
    cpu_request_millis: int
    memory_limit_bytes: int


def _resources(container: Container) -> _Resources:
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


def _crash_loop_wait(pod: Pod, exited: ContainerInfo, view: ContainerView, now: float,
                     max_delay: float = BACKOFF_MAX) -> float | None:
    """Seconds until an exited container may restart (marking the view CrashLoopBackOff), or None: now.

    The delay doubles with every restart from BACKOFF_INITIAL up to `max_delay` (upstream's
    maxContainerRestartPeriod, which also caps the first delay), and starts over for a
    container that ran at least BACKOFF_RESET seconds before it exited.
    """
    ran = (exited.finished_at or now) - (exited.started_at or now)
    initial = min(BACKOFF_INITIAL, max_delay)
    delay = initial if ran >= BACKOFF_RESET else min(initial * 2 ** exited.attempt, max_delay)
    wait = (exited.finished_at or now) + delay - now
    if wait <= 0:
        return None
    view.waiting_reason = "CrashLoopBackOff"
    view.waiting_message = (f"back-off {int(delay)}s restarting failed container={view.name} "
                            f"pod={pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})")
    return wait


def _sooner(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _running_target(spec: EphemeralContainer, instances: list[ContainerInfo]) -> str | None:
    """The id to share processes with: "" without a target, None while the target is not running."""
    if not spec.target_container_name:
        return ""
    mine = _instances(instances, spec.target_container_name)
    running = mine[-1] if mine and mine[-1].state == ContainerState.RUNNING else None
    return running.id if running is not None else None


def _view(name: str, image: str, mine: list[ContainerInfo]) -> ContainerView:
    return ContainerView(name, image, mine[-1] if mine else None, mine[-2] if len(mine) > 1 else None,
                         restart_count=mine[-1].attempt if mine else 0)


class PodSyncer:
    """Drives one runtime for every pod of the node; holds only back-off bookkeeping."""

    def __init__(self, runtime: RuntimeService, recorder: EventRecorder, *, host_ip: str = "127.0.0.1",
                 max_restart_period: float = BACKOFF_MAX, dns: DNSConfigurer | None = None,
                 objects: PodObjects | None = None, allocatable: Mapping[str, str] | None = None,
                 volumes: VolumeManager | None = None) -> None:
        self.max_restart_period = max_restart_period
        self.volumes = volumes
        self._mounted: dict[str, dict[str, MountedVolume]] = {}  # uid -> volume name -> where
        self.objects = objects or PodObjects(None)
        self.services = ServiceEnvironment(self.objects.client)
        self.allocatable = dict(allocatable or {})
        self.dns = dns or DNSConfigurer()
        self.runtime = runtime
        self.recorder = recorder
        self.host_ip = host_ip
        self._image_failures: dict[tuple[str, str], tuple[int, float]] = {}  # (uid, container) -> (n, last)

    async def sandboxes_of(self, uid: str) -> list[PodSandbox]:
        found = await self.runtime.list_pod_sandbox(labels={POD_UID_LABEL: uid})
        return sorted(found, key=lambda s: (s.attempt, s.created_at))

    async def _ensure_sandbox(self, pod: Pod) -> PodSandbox:
        sandboxes = await self.sandboxes_of(str(pod.metadata.uid))
        latest = sandboxes[-1] if sandboxes else None
        if latest is not None and latest.state == SandboxState.READY:
            return latest if latest.ip else await self.runtime.pod_sandbox_status(latest.id)  # lists carry no IP
        attempt = latest.attempt + 1 if latest is not None else 0
        for old in sandboxes:
            await self.runtime.remove_pod_sandbox(old.id)
        pod_dns = self.dns.pod_dns(pod)
        for reason, message in pod_dns.warnings:
            self.recorder.event(pod, EVENT_WARNING, reason, message)
        with child_span("RunPodSandbox", attempt=attempt):
            sandbox_id = await self.runtime.run_pod_sandbox(_sandbox_config(pod, attempt, pod_dns.config))
        return await self.runtime.pod_sandbox_status(sandbox_id)

    async def sync(self, pod: Pod) -> SyncResult:
        """Bring the runtime in line with a live pod's spec; never raises for a container failure."""
        terminal = is_pod_terminal(pod)
        if terminal:
            await self.kill(pod, grace=0, reason=None)
            await self._tear_down_volumes(str(pod.metadata.uid))  # nothing runs that could read them
            return SyncResult(None, await self.views(pod, None), init_views=await self.views(pod, None, init=True),
                              ephemeral_views=await self.views(pod, None, ephemeral=True))
        if not await self._set_up_volumes(pod):
            pending = [_view(c.name, c.image or "", []) for c in pod.spec.containers]
            for view in pending:
                view.waiting_reason = "ContainerCreating"
            return SyncResult(None, pending, MOUNT_RETRY, await self.views(pod, None, init=True),
                              initialized=not pod.spec.init_containers)
        try:
            sandbox = await self._ensure_sandbox(pod)
        except CRIError as e:
            # As upstream: the pod stays Pending with its containers waiting, a Warning event says
            # why, and the sandbox is tried again after a backoff.
            self.recorder.event(pod, EVENT_WARNING, "FailedCreatePodSandBox", f"Failed to create pod sandbox: {e}")
            pending = [_view(c.name, c.image or "", []) for c in pod.spec.containers]
            for view in pending:
                view.waiting_reason = "ContainerCreating"
            return SyncResult(None, pending, SANDBOX_RETRY, await self.views(pod, None, init=True),
                              initialized=not pod.spec.init_containers)
        instances = await self.runtime.list_containers(pod_sandbox_id=sandbox.id)
        policy = pod.spec.restart_policy or "Always"
        init_views, initialized, init_failed, retry = await self._sync_init_containers(pod, sandbox, instances)
        ephemeral_views, ephemeral_retry = await self._sync_ephemeral_containers(pod, sandbox)
        retry = _sooner(retry, ephemeral_retry)
        if not initialized:
            pending = [_view(c.name, c.image or "", []) for c in pod.spec.containers]
            for view in pending:
                view.waiting_reason = "PodInitializing"
            return SyncResult(await self.runtime.pod_sandbox_status(sandbox.id), pending, retry, init_views,
                              initialized=False, init_failed=init_failed, ephemeral_views=ephemeral_views)
        views: list[ContainerView] = []
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
                wait = _crash_loop_wait(pod, cur, view, now, self.max_restart_period)
                if wait is not None:
                    retry = wait if retry is None else min(retry, wait)
                    continue
            wait = await self._start_container(pod, sandbox, spec, view)
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
        return SyncResult(await self.runtime.pod_sandbox_status(sandbox.id), views, retry, init_views,
                          ephemeral_views=ephemeral_views)

    async def _set_up_volumes(self, pod: Pod) -> bool:
        """Set up (or refresh) the pod's volumes; False while a volume of a pod that never ran is missing.

        A pod that already has a ready sandbox keeps running on what its volumes last held,
        as upstream: the failure is only reported, with a FailedMount event, and retried.
        """
        if self.volumes is None or not pod.spec.volumes:
            return True
        uid = str(pod.metadata.uid)
        sandboxes = await self.sandboxes_of(uid)
        ip = sandboxes[-1].ip if sandboxes else None
        ctx = PayloadContext(self.objects, pod_ip=ip, host_ip=self.host_ip, allocatable=self.allocatable)
        result = await self.volumes.set_up(pod, ctx)
        self._mounted[uid] = {**self._mounted.get(uid, {}), **result.volumes}
        for name, message in result.errors.items():
            self.recorder.event(pod, EVENT_WARNING, "FailedMount",
                                f'MountVolume.SetUp failed for volume "{name}" : {message}')
        return not result.errors or any(sb.state == SandboxState.READY for sb in sandboxes)

    async def _sync_ephemeral_containers(self, pod: Pod, sandbox: PodSandbox
                                         ) -> tuple[list[ContainerView], float | None]:
        """Start each ephemeral container that never ran; (their views, retry after)."""
        specs = pod.spec.ephemeral_containers or []
        if not specs:
            return [], None
        everywhere = await self.runtime.list_containers(labels={POD_UID_LABEL: str(pod.metadata.uid)})
        here = [c for c in everywhere if c.pod_sandbox_id == sandbox.id]
        views: list[ContainerView] = []
        retry: float | None = None
        for spec in specs:
            view = _view(spec.name, spec.image or "", _instances(everywhere, spec.name))
            views.append(view)
            if view.current is not None:
                continue  # never restarted
            target_id = _running_target(spec, here)
            if target_id is None:
                view.waiting_reason = "ContainerCreating"
                retry = _sooner(retry, 1.0)
                continue
            retry = _sooner(retry, await self._start_container(pod, sandbox, spec, view, target_id=target_id))
            mine = _instances(await self.runtime.list_containers(pod_sandbox_id=sandbox.id), spec.name)
            if mine:
                view.current = mine[-1]
        for view in views:
            view.restart_count = 0
        return views, retry

    async def _sync_init_containers(self, pod: Pod, sandbox: PodSandbox, instances: list[ContainerInfo]
                                    ) -> tuple[list[ContainerView], bool, bool, float | None]:
        """Run init containers one at a time, in order, each to a zero exit.

        Returns (views, all done, failed for good, retry after). A failed init container is
        retried with the same back-off as app containers unless restartPolicy is Never, which
        fails the pod; app containers start only once every init container exited 0.
        """
        views: list[ContainerView] = []
        never = (pod.spec.restart_policy or "Always") == "Never"
        now = time.time()
        for spec in pod.spec.init_containers or []:
            view = _view(spec.name, spec.image or "", _instances(instances, spec.name))
            views.append(view)
            cur = view.current
            if cur is not None and cur.state == ContainerState.EXITED and cur.exit_code == 0:
                continue
            pending = [_view(c.name, c.image or "", _instances(instances, c.name))
                       for c in (pod.spec.init_containers or [])[len(views):]]
            if cur is not None and cur.state in (ContainerState.RUNNING, ContainerState.CREATED):
                return views + pending, False, False, None
            if cur is not None and cur.state == ContainerState.EXITED:
                if never:
                    return views + pending, False, True, None
                wait = _crash_loop_wait(pod, cur, view, now, self.max_restart_period)
                if wait is not None:
                    return views + pending, False, False, wait
            retry = await self._start_container(pod, sandbox, spec, view)
            fresh = _instances(await self.runtime.list_containers(pod_sandbox_id=sandbox.id), spec.name)
            if fresh:
                view.current, view.previous = fresh[-1], (fresh[-2] if len(fresh) > 1 else None)
                view.restart_count = fresh[-1].attempt
            return views + pending, False, False, retry if retry is not None else 0.5
        return views, True, False, None

    async def _start_container(self, pod: Pod, sandbox: PodSandbox, spec: Container, view: ContainerView, *,
                               target_id: str = "") -> float | None:
        name, image = spec.name, spec.image or ""
        key = (str(pod.metadata.uid), name)
        with child_span("ImageStatus", image=image):
            present = await self.runtime.image_status(image) is not None
        if not present and spec.image_pull_policy == "Never":
            view.waiting_reason = "ErrImageNeverPull"
            view.waiting_message = f'Container image "{image}" is not present with pull policy of Never'
            self.recorder.event(pod, EVENT_WARNING, "ErrImageNeverPull", view.waiting_message)
            return 5.0  # look again soon: `picokube image import` may bring it
        if not present:
            failures, last = self._image_failures.get(key, (0, 0.0))
            if failures:
                wait = last + min(IMAGE_BACKOFF_INITIAL * 2.0 ** (failures - 1), BACKOFF_MAX) - time.time()
                if wait > 0:
                    view.waiting_reason = "ImagePullBackOff"
                    view.waiting_message = f'Back-off pulling image "{image}"'
                    return wait
            self.recorder.event(pod, EVENT_NORMAL, "Pulling", f'Pulling image "{image}"')
            note_waiting(f"pulling image {image}")
            try:
                with child_span("PullImage", image=image):
                    await self.runtime.pull_image(image)
            except ImagePullError as e:
                self._image_failures[key] = (failures + 1, time.time())
                view.waiting_reason, view.waiting_message = "ErrImagePull", str(e)
                self.recorder.event(pod, EVENT_WARNING, "Failed", f'Failed to pull image "{image}": {e}')
                return min(IMAGE_BACKOFF_INITIAL * 2.0 ** failures, BACKOFF_MAX)
            self._image_failures.pop(key, None)
            self.recorder.event(pod, EVENT_NORMAL, "Pulled", f'Successfully pulled image "{image}"')
        else:
            self.recorder.event(pod, EVENT_NORMAL, "Pulled", f'Container image "{image}" already present on machine')
        try:
            env = await make_environment(pod, spec, await self._env_context(pod, sandbox))
        except ContainerConfigError as e:
            view.waiting_reason, view.waiting_message = "CreateContainerConfigError", str(e)
            self.recorder.event(pod, EVENT_WARNING, "Failed", f"Error: {e}")
            return CONFIG_RETRY
        command, args = expand_command(spec, env)
        try:
            mounts = self.volumes.container_mounts(spec, self._mounted.get(str(pod.metadata.uid), {}), env) \
                if self.volumes is not None else ()
        except ContainerConfigError as e:
            view.waiting_reason, view.waiting_message = "CreateContainerConfigError", str(e)
            self.recorder.event(pod, EVENT_WARNING, "Failed", f"Error: {e}")
            return CONFIG_RETRY
        attempt = view.current.attempt + 1 if view.current is not None else 0
        labels = {POD_UID_LABEL: str(pod.metadata.uid), POD_NAME_LABEL: str(pod.metadata.name),
                  POD_NAMESPACE_LABEL: str(pod.metadata.namespace), CONTAINER_NAME_LABEL: name}
        config = ContainerConfig(name=name, image=image, command=command, args=args, env=env, mounts=mounts,
                                 working_dir=spec.working_dir or "", attempt=attempt, labels=labels,
                                 stdin=bool(spec.stdin), stdin_once=bool(spec.stdin_once), tty=bool(spec.tty),
                                 pid_target_id=target_id, **_resources(spec))
        sandbox_config = _sandbox_config(pod, sandbox.attempt, self.dns.pod_dns(pod).config)
        try:
            with child_span("CreateContainer", container=name, image=image):
                cid = await self.runtime.create_container(sandbox.id, config, sandbox_config)
            self.recorder.event(pod, EVENT_NORMAL, "Created", f"Created container {name}")
            with child_span("StartContainer", container=name):
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

    async def _env_context(self, pod: Pod, sandbox: PodSandbox) -> EnvContext:
        """What resolving the pod's variables needs; ContainerConfigError when Services cannot be listed."""
        def warn(reason: str, message: str) -> None:
            self.recorder.event(pod, EVENT_WARNING, reason, message)
        try:
            services = await self.services.for_pod(str(pod.metadata.namespace),
                                                   enable_service_links=pod.spec.enable_service_links is not False)
        except ApiError as e:
            raise ContainerConfigError(f"failed to list services: {e}") from e
        return EnvContext(self.objects, pod_ip=sandbox.ip, host_ip=self.host_ip, allocatable=self.allocatable,
                          warn=warn, service_env=services)

    async def views(self, pod: Pod, sandbox: PodSandbox | None, *, init: bool = False,
                    ephemeral: bool = False) -> list[ContainerView]:
        """Container views (of the init containers with `init`, of the ephemeral ones with `ephemeral`)
        from whatever the runtime still holds."""
        instances: list[ContainerInfo] = []
        for sb in await self.sandboxes_of(str(pod.metadata.uid)):
            instances.extend(await self.runtime.list_containers(pod_sandbox_id=sb.id))
        specs: list[Container] = list(pod.spec.ephemeral_containers or []) if ephemeral else \
            (pod.spec.init_containers or []) if init else pod.spec.containers
        return [_view(spec.name, spec.image or "", _instances(instances, spec.name)) for spec in specs]

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
        """Remove everything the runtime holds for the pod `uid` (an orphan, or a deleted pod), then
        its volumes and cached tokens."""
        for sb in await self.sandboxes_of(uid):
            await self.runtime.remove_pod_sandbox(sb.id)
        self.objects.forget_pod(uid)
        await self._tear_down_volumes(uid)

    async def _tear_down_volumes(self, uid: str) -> None:
        self._mounted.pop(uid, None)
        if self.volumes is not None:
            await self.volumes.tear_down(uid)
