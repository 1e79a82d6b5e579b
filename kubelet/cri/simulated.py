"""SimulatedRuntime: a complete in-memory container runtime behind the CRI protocol.

It stands in for containerd (the one thing outside the system the kubelet drives), so the
kubelet's whole sync path runs for real without root, images or processes. It is not a mock:
it keeps sandboxes, containers and images with CRI semantics and enforces them (no container
without a ready sandbox, no container without its image, no double start).

Behaviour, all driven by the injected `Clock` so tests can advance time:
- `start_container` takes `start_delay` seconds (`--pod-start-delay`), then the container is
  RUNNING; what it does next comes from its command line, read as a tiny `sh` subset (see
  `kubelet.cri._script`): `["sh", "-c", "exit 0"]` exits 0 at once, `["sh", "-c", "sleep 5;
  exit 1"]` exits 1 after five seconds, anything it does not understand runs until stopped.
  States are computed from the clock when read, so no background task is needed;
- `exit_codes={image: code}` makes every container of that image exit with `code` as soon
  as it starts (regardless of its command);
- images listed in `failing_images`, and any image from a registry on the reserved `.invalid`
  domain (RFC 2606, e.g. `registry.invalid/app:1`), fail to pull with `ImagePullError`;
- sandbox IPs come from `pod_cidr` (the network and the first host, the gateway, are never
  handed out) and go back to the pool when the sandbox stops;
- each container keeps log lines (`container_logs`): `started <name> with image <image>`,
  then whatever its script `echo`es or `cat`s, for the pods/log feature; the files it can
  `cat` are its sandbox's /etc/resolv.conf (rendered from the sandbox's DNS config as
  containerd writes it), /etc/hostname, and the files under its mounts (volumes the kubelet
  prepared on disk, read when asked: `kubelet.cri._mounted_files`);
- a container created with `pid_target_id` (an ephemeral container with a target) needs that
  container running in the same sandbox, as containerd does to join its pid namespace.
Everything lives in memory: a new instance (a restarted kubelet) starts empty.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import re
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kube.clock import Clock, RealClock
from kubelet.cri._mounted_files import MountedFiles
from kubelet.cri._script import Program, interpret
from kubelet.cri.interface import (
    ContainerConfig,
    ContainerInfo,
    ContainerState,
    CRIError,
    ImageInfo,
    ImagePullError,
    NotFoundError,
    PodSandbox,
    PodSandboxConfig,
    RuntimeVersion,
    SandboxState,
)
from kubelet.cri.logformat import LogLine

__all__ = ["SimulatedRuntime", "LogLine", "normalize_image", "sandbox_files", "RUNTIME_NAME", "RUNTIME_VERSION"]

logger = logging.getLogger(__name__)

RUNTIME_NAME = "simulated"
RUNTIME_VERSION = "0.1"
HOST_RESOLV_CONF = "/etc/resolv.conf"
STOP_SIGNAL_EXIT_CODE = 143  # 128 + SIGTERM: a process that honours the stop signal
_IMAGE_SIZE = 10 * 1024 * 1024


def normalize_image(image: str) -> str:
    """The fully qualified reference: `nginx` -> `docker.io/library/nginx:latest`."""
    name, _, digest = image.partition("@")
    if not digest and ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    return f"{name}@{digest}" if digest else name


def _registry_host(reference: str) -> str:
    return reference.split("/", 1)[0].split(":", 1)[0]


def sandbox_files(config: PodSandboxConfig) -> dict[str, str]:
    """The files a sandbox gives its containers: /etc/resolv.conf from its DNS config (the host's when
    that is empty, as containerd does) and /etc/hostname."""
    resolv = config.dns_config.resolv_conf() if config.dns_config is not None else ""
    if not resolv:
        try:
            resolv = Path(HOST_RESOLV_CONF).read_text(errors="replace")
        except OSError:
            resolv = ""
    return {"/etc/resolv.conf": resolv, "/etc/hostname": f"{config.hostname}\n"}


@dataclass
class _Sandbox:
    id: str
    config: PodSandboxConfig
    created_at: float
    state: SandboxState = SandboxState.READY
    ip: str | None = None


@dataclass
class _Container:
    id: str
    sandbox_id: str
    config: ContainerConfig
    image: ImageInfo
    program: Program
    created_at: float
    starting: bool = False
    started_at: float | None = None
    stopped_at: float | None = None
    labels: Mapping[str, str] = field(default_factory=dict)


class _IPPool:
    """Host-local IPAM in miniature: round-robin over the CIDR, skipping the gateway."""

    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self._used: set[str] = set()
        self._next = 2

    def allocate(self) -> str:
        size = self.network.num_addresses
        usable = range(2, size - 1) if self.network.version == 4 else range(2, size)
        for _ in range(len(usable)):
            if self._next not in usable:
                self._next = usable.start
            ip = str(self.network.network_address + self._next)
            self._next += 1
            if ip not in self._used:
                self._used.add(ip)
                return ip
        raise CRIError(f"no free IP address left in {self.network}")

    def release(self, ip: str | None) -> None:
        if ip:
            self._used.discard(ip)


class SimulatedRuntime:
    """An in-memory `RuntimeService`; safe for many tasks of one event loop."""

    def __init__(self, *, pod_cidr: str = "10.244.1.0/24", start_delay: float = 0.0,
                 failing_images: Iterable[str] = (), exit_codes: Mapping[str, int] | None = None,
                 clock: Clock | None = None, wall_epoch: float | None = None) -> None:
        self.start_delay = start_delay
        self.failing_images = {normalize_image(i) for i in failing_images}
        self.exit_codes = {normalize_image(k): v for k, v in (exit_codes or {}).items()}
        self.clock = clock or RealClock()
        self._mono0 = self.clock.now()
        self._wall0 = time.time() if wall_epoch is None else wall_epoch
        self._ips = _IPPool(pod_cidr)
        self._sandboxes: dict[str, _Sandbox] = {}
        self._containers: dict[str, _Container] = {}
        self._images: dict[str, ImageInfo] = {}
        self._logs: dict[str, list[LogLine]] = {}

    def _now(self) -> float:
        """Epoch seconds, derived from the injected clock so a FakeClock moves it too."""
        return self._wall0 + (self.clock.now() - self._mono0)

    # --- RuntimeService: sandboxes -------------------------------------------------------
    async def version(self) -> RuntimeVersion:
        return RuntimeVersion(RUNTIME_NAME, RUNTIME_VERSION)

    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str:
        sandbox = _Sandbox(secrets.token_hex(32), config, self._now(), ip=self._ips.allocate())
        self._sandboxes[sandbox.id] = sandbox
        logger.debug("Sandbox started", extra={"pod": f"{config.namespace}/{config.name}", "sandbox": sandbox.id[:12],
                                               "ip": sandbox.ip})
        return sandbox.id

    async def stop_pod_sandbox(self, pod_sandbox_id: str) -> None:
        sandbox = self._sandboxes.get(pod_sandbox_id)
        if sandbox is None:
            return
        for c in self._containers.values():
            if c.sandbox_id == pod_sandbox_id:
                self._stop(c)
        self._ips.release(sandbox.ip)
        sandbox.state, sandbox.ip = SandboxState.NOTREADY, None

    async def remove_pod_sandbox(self, pod_sandbox_id: str) -> None:
        await self.stop_pod_sandbox(pod_sandbox_id)
        for cid in [c.id for c in self._containers.values() if c.sandbox_id == pod_sandbox_id]:
            await self.remove_container(cid)
        self._sandboxes.pop(pod_sandbox_id, None)

    async def pod_sandbox_status(self, pod_sandbox_id: str) -> PodSandbox:
        return self._sandbox_info(self._sandbox(pod_sandbox_id))

    async def list_pod_sandbox(self, *, labels: Mapping[str, str] | None = None) -> list[PodSandbox]:
        return [self._sandbox_info(s) for s in self._sandboxes.values() if _matches(s.config.labels, labels)]

    def _sandbox(self, pod_sandbox_id: str) -> _Sandbox:
        sandbox = self._sandboxes.get(pod_sandbox_id)
        if sandbox is None:
            raise NotFoundError(f"sandbox {pod_sandbox_id} not found")
        return sandbox

    @staticmethod
    def _sandbox_info(s: _Sandbox) -> PodSandbox:
        return PodSandbox(id=s.id, name=s.config.name, namespace=s.config.namespace, uid=s.config.uid,
                          attempt=s.config.attempt, state=s.state, created_at=s.created_at, ip=s.ip,
                          labels=dict(s.config.labels), annotations=dict(s.config.annotations))

    # --- RuntimeService: containers ------------------------------------------------------
    async def create_container(self, pod_sandbox_id: str, config: ContainerConfig,
                               sandbox_config: PodSandboxConfig) -> str:
        sandbox = self._sandbox(pod_sandbox_id)
        if sandbox.state != SandboxState.READY:
            raise CRIError(f"sandbox {pod_sandbox_id} is not ready")
        image = self._images.get(normalize_image(config.image))
        if image is None:
            raise CRIError(f"image {config.image!r} is not present on the node")
        if config.pid_target_id:  # containerd joins the target's pid namespace, so it must run in this sandbox
            target = self._containers.get(config.pid_target_id)
            if target is None or target.sandbox_id != pod_sandbox_id or \
                    self._state(target)[0] != ContainerState.RUNNING:
                raise CRIError(f"target container {config.pid_target_id} is not running in sandbox {pod_sandbox_id}")
        ref = normalize_image(config.image)
        program = interpret(config.command, config.args, files=MountedFiles(sandbox_files(sandbox.config),
                                                                            config.mounts))
        if ref in self.exit_codes:
            program = Program(program.output, 0.0, self.exit_codes[ref])
        container = _Container(secrets.token_hex(32), pod_sandbox_id, config, image, program, self._now(),
                               labels=dict(config.labels))
        self._containers[container.id] = container
        self._logs[container.id] = []
        return container.id

    async def start_container(self, container_id: str) -> None:
        c = self._container(container_id)
        if c.starting or c.started_at is not None or c.stopped_at is not None:
            raise CRIError(f"container {container_id} is not in created state")
        c.starting = True
        try:
            await self.clock.sleep(self.start_delay)
        finally:
            c.starting = False
        if self._containers.get(container_id) is not c or c.stopped_at is not None:
            raise CRIError(f"container {container_id} was stopped or removed while starting")
        if self._sandboxes[c.sandbox_id].state != SandboxState.READY:
            raise CRIError(f"sandbox {c.sandbox_id} stopped while container {container_id} was starting")
        c.started_at = self._now()
        self._logs[c.id].append(LogLine(c.started_at, f"started {c.config.name} with image {c.config.image}"))
        self._logs[c.id].extend(LogLine(c.started_at + off, text) for off, text in c.program.output)

    async def stop_container(self, container_id: str, timeout: float) -> None:
        # The simulated process honours SIGTERM at once, so `timeout` is never waited out.
        self._stop(self._container(container_id))

    def _stop(self, c: _Container) -> None:
        if self._state(c)[0] != ContainerState.EXITED:
            c.stopped_at = self._now()

    async def remove_container(self, container_id: str) -> None:
        c = self._containers.pop(container_id, None)
        if c is not None:
            c.stopped_at = c.stopped_at or self._now()
        self._logs.pop(container_id, None)

    async def list_containers(self, *, pod_sandbox_id: str | None = None,
                              labels: Mapping[str, str] | None = None, brief: bool = False) -> list[ContainerInfo]:
        return [self._container_info(c) for c in self._containers.values()
                if (pod_sandbox_id is None or c.sandbox_id == pod_sandbox_id) and _matches(c.labels, labels)]

    async def container_status(self, container_id: str) -> ContainerInfo:
        return self._container_info(self._container(container_id))

    async def exec_sync(self, container_id: str, cmd: list[str], timeout: float) -> tuple[int, str]:
        """Run a command "in" a running container: `false` fails, `sh -c "exit N"` exits N, the rest succeed."""
        c = self._container(container_id)
        if self._state(c)[0] != ContainerState.RUNNING:
            raise CRIError(f"container {container_id} is not running")
        if cmd == ["false"]:
            return 1, ""
        if len(cmd) == 3 and cmd[:2] == ["sh", "-c"] and (m := re.fullmatch(r"\s*exit\s+(\d+)\s*", cmd[2])):
            return int(m.group(1)), ""
        return 0, ""

    def _container(self, container_id: str) -> _Container:
        c = self._containers.get(container_id)
        if c is None:
            raise NotFoundError(f"container {container_id} not found")
        return c

    def _state(self, c: _Container) -> tuple[ContainerState, float | None, int | None]:
        """(state, finished_at, exit_code) at the current clock reading."""
        natural = (c.started_at + c.program.runs_for
                   if c.started_at is not None and c.program.runs_for is not None else None)
        if c.stopped_at is not None and (natural is None or c.stopped_at < natural):
            return ContainerState.EXITED, c.stopped_at, STOP_SIGNAL_EXIT_CODE if c.started_at is not None else 0
        if natural is not None and natural <= self._now():
            return ContainerState.EXITED, natural, c.program.exit_code
        if c.started_at is None:
            return ContainerState.CREATED, None, None
        return ContainerState.RUNNING, None, None

    def _container_info(self, c: _Container) -> ContainerInfo:
        state, finished_at, exit_code = self._state(c)
        reason = "" if state != ContainerState.EXITED else ("Completed" if exit_code == 0 else "Error")
        ref = normalize_image(c.config.image)
        digest = c.image.repo_digests[0] if c.image.repo_digests else ref
        return ContainerInfo(id=c.id, pod_sandbox_id=c.sandbox_id, name=c.config.name, attempt=c.config.attempt,
                             image=ref, image_ref=digest, state=state, created_at=c.created_at,
                             started_at=c.started_at, finished_at=finished_at, exit_code=exit_code, reason=reason,
                             labels=dict(c.labels), annotations=dict(c.config.annotations))

    # --- ImageService --------------------------------------------------------------------
    async def pull_image(self, image: str) -> str:
        ref = normalize_image(image)
        if ref in self.failing_images or _registry_host(ref).endswith(".invalid"):
            raise ImagePullError(f'failed to pull and unpack image "{ref}": not found')
        if ref not in self._images:
            digest = "sha256:" + hashlib.sha256(ref.encode()).hexdigest()
            repo = ref.rsplit("@", 1)[0].rsplit(":", 1)[0] if "@" not in ref else ref.split("@", 1)[0]
            self._images[ref] = ImageInfo(id=digest, repo_tags=(ref,), repo_digests=(f"{repo}@{digest}",),
                                          size=_IMAGE_SIZE)
        return self._images[ref].id

    async def image_status(self, image: str) -> ImageInfo | None:
        return self._images.get(normalize_image(image))

    # --- beyond the CRI: what only a simulation can offer --------------------------------
    def container_logs(self, container_id: str) -> list[LogLine]:
        """The lines the container has written so far; raise NotFoundError when it is gone."""
        c = self._container(container_id)
        _, finished_at, _ = self._state(c)
        until = self._now() if finished_at is None else finished_at
        return [line for line in self._logs[c.id] if line.time <= until]

    def container_config(self, container_id: str) -> ContainerConfig:
        """The config the container was created with (its env for exec); NotFoundError when gone."""
        return self._container(container_id).config

    def container_files(self, container_id: str) -> MountedFiles:
        """What the container can `cat`: its sandbox's files and its mounts'; NotFoundError when gone."""
        c = self._container(container_id)
        return MountedFiles(sandbox_files(self._sandbox(c.sandbox_id).config), c.config.mounts)

    def container_state(self, container_id: str) -> ContainerState:
        return self._state(self._container(container_id))[0]

    def container_exit_code(self, container_id: str) -> int | None:
        return self._state(self._container(container_id))[2]

    def sandbox_hostname(self, pod_sandbox_id: str) -> str:
        """The pod's hostname (`spec.hostname`, else its name), as its containers see it."""
        config = self._sandbox(pod_sandbox_id).config
        return config.hostname or config.name

    def sandbox_ip(self, pod_sandbox_id: str) -> str | None:
        sandbox = self._sandboxes.get(pod_sandbox_id)
        return sandbox.ip if sandbox is not None else None


def _matches(have: Mapping[str, str], want: Mapping[str, str] | None) -> bool:
    return not want or all(have.get(k) == v for k, v in want.items())

