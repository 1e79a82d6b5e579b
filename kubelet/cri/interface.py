"""The container runtime as the kubelet sees it: the CRI verbs, as a Python protocol.

Mirrors cri-api `pkg/apis/services.go` (RuntimeService + ImageService), reduced to what the
kubelet uses. Every runtime (the in-memory `SimulatedRuntime`, later a gRPC client for
containerd) implements `RuntimeService`, and the kubelet talks to nothing else, so the sync
logic never knows which runtime it drives.

Contract shared by every implementation:
- sandboxes and containers carry the labels below (`POD_UID_LABEL`, ...); the kubelet finds
  a pod's runtime objects by its uid label only, so a restarted kubelet can rebuild its view
  from `list_pod_sandbox` / `list_containers` alone;
- `start_container` returns once the container runs (or raises); a container that was
  created but never started stays `CREATED`;
- stopping or removing something already stopped or removed is not an error (idempotent),
  but asking about an unknown id raises `NotFoundError`;
- timestamps are seconds since the epoch (CRI uses nanoseconds; floats keep it readable).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

__all__ = [
    "POD_UID_LABEL", "POD_NAME_LABEL", "POD_NAMESPACE_LABEL", "CONTAINER_NAME_LABEL",
    "ContainerState", "SandboxState", "DNSConfig", "Mount", "PodSandboxConfig", "PortMappingSpec", "ContainerConfig",
    "PodSandbox",
    "ContainerInfo", "ImageInfo", "RuntimeVersion", "RuntimeService", "CRIError", "NotFoundError", "ImagePullError",
]

POD_UID_LABEL = "io.kubernetes.pod.uid"
POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"


class ContainerState(StrEnum):
    CREATED = "CONTAINER_CREATED"
    RUNNING = "CONTAINER_RUNNING"
    EXITED = "CONTAINER_EXITED"
    UNKNOWN = "CONTAINER_UNKNOWN"


class SandboxState(StrEnum):
    READY = "SANDBOX_READY"
    NOTREADY = "SANDBOX_NOTREADY"


class CRIError(Exception):
    """A runtime call failed."""


class NotFoundError(CRIError):
    """The sandbox, container or image id is unknown to the runtime."""


class ImagePullError(CRIError):
    """The image could not be pulled (unknown, unauthorized, unreachable registry)."""


@dataclass(frozen=True)
class PortMappingSpec:
    """A hostPort of one of the pod's containers."""

    container_port: int
    host_port: int
    protocol: str = "TCP"
    host_ip: str = ""


@dataclass(frozen=True)
class DNSConfig:
    """The pod's resolv.conf as the CRI's DNSConfig carries it; all empty: the runtime copies the host's."""

    servers: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()
    options: tuple[str, ...] = ()

    def resolv_conf(self) -> str:
        """The file the runtime writes, in containerd's layout (search, nameserver lines, options)."""
        text = f"search {' '.join(self.searches)}\n" if self.searches else ""
        text += "".join(f"nameserver {s}\n" for s in self.servers)
        return text + (f"options {' '.join(self.options)}\n" if self.options else "")


@dataclass(frozen=True)
class PodSandboxConfig:
    """What `run_pod_sandbox` needs: the pod's identity, its attempt, labels, networking and DNS."""

    name: str
    namespace: str
    uid: str
    attempt: int = 0
    hostname: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    host_network: bool = False
    port_mappings: tuple[PortMappingSpec, ...] = ()
    dns_config: DNSConfig | None = None


@dataclass(frozen=True)
class Mount:
    """A node path bind-mounted into the container (CRI Mount): a volume, or a subPath of one."""

    container_path: str
    host_path: str
    readonly: bool = False


@dataclass(frozen=True)
class ContainerConfig:
    """What `create_container` needs; `attempt` counts restarts of this container name."""

    name: str
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    working_dir: str = ""
    attempt: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    # Resources as cgroup limits (0: none): limits.cpu, requests.cpu (shares), limits.memory.
    cpu_limit_millis: int = 0
    cpu_request_millis: int = 0
    memory_limit_bytes: int = 0
    # The container's stdin stays open for `attach` (closed after the first attach with
    # stdin_once); tty gives it a terminal.
    stdin: bool = False
    stdin_once: bool = False
    tty: bool = False
    pid_target_id: str = ""
    """Join this container's process namespace (CRI NamespaceMode TARGET), as an ephemeral
    container with a targetContainerName does; the target must be running."""
    mounts: tuple[Mount, ...] = ()


@dataclass(frozen=True)
class PodSandbox:
    """A sandbox as the runtime reports it (CRI PodSandbox + PodSandboxStatus)."""

    id: str
    name: str
    namespace: str
    uid: str
    attempt: int
    state: SandboxState
    created_at: float
    ip: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ContainerInfo:
    """A container as the runtime reports it (CRI Container + ContainerStatus)."""

    id: str
    pod_sandbox_id: str
    name: str
    attempt: int
    image: str
    image_ref: str
    state: ContainerState
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    log_path: str = ""


@dataclass(frozen=True)
class ImageInfo:
    """An image present on the node: its id (`sha256:...`), the references naming it, its size."""

    id: str
    repo_tags: tuple[str, ...]
    repo_digests: tuple[str, ...]
    size: int


@dataclass(frozen=True)
class RuntimeVersion:
    runtime_name: str
    runtime_version: str
    runtime_api_version: str = "v1"


class RuntimeService(Protocol):
    """The CRI RuntimeService and ImageService verbs the kubelet calls.

    All methods are coroutines and safe to call concurrently from many tasks of one loop.
    """

    async def version(self) -> RuntimeVersion: ...

    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str:
        """Create and start a sandbox (network namespace, IP); return its id."""
        ...

    async def stop_pod_sandbox(self, pod_sandbox_id: str) -> None:
        """Stop every container of the sandbox and release its IP; idempotent."""
        ...

    async def remove_pod_sandbox(self, pod_sandbox_id: str) -> None:
        """Remove a sandbox and its containers (stopping them first); idempotent."""
        ...

    async def pod_sandbox_status(self, pod_sandbox_id: str) -> PodSandbox: ...

    async def list_pod_sandbox(self, *, labels: Mapping[str, str] | None = None) -> list[PodSandbox]:
        """Every sandbox whose labels include `labels` (all when None)."""
        ...

    async def create_container(self, pod_sandbox_id: str, config: ContainerConfig,
                               sandbox_config: PodSandboxConfig) -> str:
        """Create (not start) a container in a ready sandbox; the image must be present."""
        ...

    async def start_container(self, container_id: str) -> None: ...

    async def stop_container(self, container_id: str, timeout: float) -> None:
        """Signal the container, wait up to `timeout` seconds, then kill it; idempotent."""
        ...

    async def remove_container(self, container_id: str) -> None: ...

    async def list_containers(self, *, pod_sandbox_id: str | None = None,
                              labels: Mapping[str, str] | None = None, brief: bool = False) -> list[ContainerInfo]:
        """Every container matching the filters, with its current state.

        `brief=True` promises only id, sandbox, name, attempt, image, state, created_at and
        labels (what CRI's ListContainers carries), so a runtime may skip the per-container
        status calls; the relist uses it, since it only compares ids and states."""
        ...

    async def container_status(self, container_id: str) -> ContainerInfo: ...

    async def exec_sync(self, container_id: str, cmd: list[str], timeout: float) -> tuple[int, str]:
        """Run `cmd` in a running container; (exit code, output)."""
        ...

    async def pull_image(self, image: str) -> str:
        """Pull `image`; return the image ref (`sha256:...`); raise ImagePullError on failure."""
        ...

    async def image_status(self, image: str) -> ImageInfo | None:
        """The image if it is present on the node, else None."""
        ...
