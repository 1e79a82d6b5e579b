"""RemoteRuntime: the kubelet's `RuntimeService` over gRPC to a CRI runtime (containerd).

Mirrors the kubelet's `remote_runtime.go` / `remote_image.go`, through the project's own
minimal `runtime.v1` proto (`kubelet/cri/proto`):
- every call has a deadline (`timeout`, longer for pulls and sandbox runs); gRPC NOT_FOUND
  becomes `NotFoundError`, any other failure `CRIError` (a failed pull `ImagePullError`);
- containerd's ImageStatus answers OK with no image for a missing one; that is `None`;
- pods' logs go to `<log_root>/<namespace>_<name>_<uid>/<container>/<attempt>.log`, the
  kubelet's layout, in the CRI log format; `container_logs` reads them back, joining
  partial (`P`) chunks into lines;
- stop and remove of something already gone are not errors, as the interface requires;
- exec, attach and port-forward only return the URL of the runtime's streaming server (CRI's
  Exec/Attach/PortForward); the kubelet relays the client's connection there.
Timestamps convert from the CRI's nanoseconds to float seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import grpc

from kubelet.cri.interface import (
    ContainerConfig,
    ContainerInfo,
    ContainerState,
    CRIError,
    DNSConfig,
    ImageInfo,
    ImagePullError,
    NotFoundError,
    PodSandbox,
    PodSandboxConfig,
    RuntimeVersion,
    SandboxState,
)
from kubelet.cri.logformat import LogLine, parse_cri_log
from kubelet.cri.proto import runtime_v1_pb2 as pb
from kubelet.cri.proto import runtime_v1_pb2_grpc as pb_grpc

__all__ = ["RemoteRuntime"]

_SANDBOX_STATES = {pb.SANDBOX_READY: SandboxState.READY, pb.SANDBOX_NOTREADY: SandboxState.NOTREADY}
_CONTAINER_STATES = {pb.CONTAINER_CREATED: ContainerState.CREATED, pb.CONTAINER_RUNNING: ContainerState.RUNNING,
                     pb.CONTAINER_EXITED: ContainerState.EXITED, pb.CONTAINER_UNKNOWN: ContainerState.UNKNOWN}
_PROTOCOLS = {"TCP": pb.TCP, "UDP": pb.UDP, "SCTP": pb.SCTP}


def _dns_config(config: DNSConfig | None) -> pb.DNSConfig | None:
    """The CRI DNSConfig; None (unset) lets the runtime copy the host's resolv.conf."""
    if config is None:
        return None
    return pb.DNSConfig(servers=list(config.servers), searches=list(config.searches), options=list(config.options))


def _security_context(config: ContainerConfig, sandbox: PodSandboxConfig) -> pb.LinuxContainerSecurityContext | None:
    """Namespaces for a container that joins another's processes (TARGET); None keeps the runtime's defaults."""
    if not config.pid_target_id:
        return None
    return pb.LinuxContainerSecurityContext(namespace_options=pb.NamespaceOption(
        network=pb.NODE if sandbox.host_network else pb.POD, pid=pb.TARGET, ipc=pb.POD,
        target_id=config.pid_target_id))


def _seconds(ns: int) -> float | None:
    return ns / 1e9 if ns else None


class RemoteRuntime:
    """A CRI runtime at `endpoint` (`unix:///run/containerd/containerd.sock`)."""

    def __init__(self, endpoint: str, *, log_root: str | Path, timeout: float = 10.0) -> None:
        target = endpoint if "://" in endpoint else f"unix://{endpoint}"
        self.endpoint = target
        self.log_root = Path(log_root)
        self.timeout = timeout
        self._channel = grpc.aio.insecure_channel(target)
        self._runtime = pb_grpc.RuntimeServiceStub(self._channel)
        self._images = pb_grpc.ImageServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def _call(self, method, request, *, timeout: float | None = None, what: str = ""):  # type: ignore[no-untyped-def]
        try:
            return await method(request, timeout=timeout or self.timeout)
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFoundError(e.details() or what) from None
            raise CRIError(f"{what}: {e.details() or e.code().name}") from None

    # --- runtime ---------------------------------------------------------------------------
    async def version(self) -> RuntimeVersion:
        r = await self._call(self._runtime.Version, pb.VersionRequest(version="v1"), what="Version")
        return RuntimeVersion(r.runtime_name, r.runtime_version, r.runtime_api_version)

    def sandbox_log_directory(self, config: PodSandboxConfig) -> Path:
        return self.log_root / f"{config.namespace}_{config.name}_{config.uid}"

    def _sandbox_config(self, config: PodSandboxConfig) -> pb.PodSandboxConfig:
        log_dir = self.sandbox_log_directory(config)
        host_network = config.host_network
        return pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=config.name, uid=config.uid, namespace=config.namespace,
                                           attempt=config.attempt),
            hostname="" if host_network else config.hostname, log_directory=str(log_dir),
            dns_config=_dns_config(config.dns_config),
            port_mappings=[pb.PortMapping(protocol=_PROTOCOLS.get(p.protocol, pb.TCP), container_port=p.container_port,
                                          host_port=p.host_port, host_ip=p.host_ip) for p in config.port_mappings],
            labels=dict(config.labels), annotations=dict(config.annotations),
            linux=pb.LinuxPodSandboxConfig(security_context=pb.LinuxSandboxSecurityContext(
                namespace_options=pb.NamespaceOption(network=pb.NODE if host_network else pb.POD))))

    async def run_pod_sandbox(self, config: PodSandboxConfig) -> str:
        self.sandbox_log_directory(config).mkdir(parents=True, exist_ok=True)
        r = await self._call(self._runtime.RunPodSandbox, pb.RunPodSandboxRequest(config=self._sandbox_config(config)),
                             timeout=max(self.timeout, 60), what="RunPodSandbox")
        return str(r.pod_sandbox_id)

    async def stop_pod_sandbox(self, pod_sandbox_id: str) -> None:
        try:
            await self._call(self._runtime.StopPodSandbox, pb.StopPodSandboxRequest(pod_sandbox_id=pod_sandbox_id),
                             timeout=max(self.timeout, 60), what="StopPodSandbox")
        except NotFoundError:
            pass

    async def remove_pod_sandbox(self, pod_sandbox_id: str) -> None:
        try:
            await self._call(self._runtime.RemovePodSandbox,
                             pb.RemovePodSandboxRequest(pod_sandbox_id=pod_sandbox_id),
                             timeout=max(self.timeout, 60), what="RemovePodSandbox")
        except NotFoundError:
            pass

    async def pod_sandbox_status(self, pod_sandbox_id: str) -> PodSandbox:
        r = await self._call(self._runtime.PodSandboxStatus,
                             pb.PodSandboxStatusRequest(pod_sandbox_id=pod_sandbox_id), what="PodSandboxStatus")
        s = r.status
        return PodSandbox(id=s.id, name=s.metadata.name, namespace=s.metadata.namespace, uid=s.metadata.uid,
                          attempt=s.metadata.attempt, state=_SANDBOX_STATES[s.state],
                          created_at=_seconds(s.created_at) or 0.0, ip=s.network.ip or None,
                          labels=dict(s.labels), annotations=dict(s.annotations))

    async def list_pod_sandbox(self, *, labels: Mapping[str, str] | None = None) -> list[PodSandbox]:
        r = await self._call(self._runtime.ListPodSandbox, pb.ListPodSandboxRequest(
            filter=pb.PodSandboxFilter(label_selector=dict(labels or {}))), what="ListPodSandbox")
        return [PodSandbox(id=s.id, name=s.metadata.name, namespace=s.metadata.namespace, uid=s.metadata.uid,
                           attempt=s.metadata.attempt, state=_SANDBOX_STATES[s.state],
                           created_at=_seconds(s.created_at) or 0.0, labels=dict(s.labels),
                           annotations=dict(s.annotations)) for s in r.items]

    async def create_container(self, pod_sandbox_id: str, config: ContainerConfig,
                               sandbox_config: PodSandboxConfig) -> str:
        resources = pb.LinuxContainerResources(
            cpu_period=100_000 if config.cpu_limit_millis else 0,
            cpu_quota=config.cpu_limit_millis * 100 if config.cpu_limit_millis else 0,
            cpu_shares=max(2, config.cpu_request_millis * 1024 // 1000) if config.cpu_request_millis else 2,
            memory_limit_in_bytes=config.memory_limit_bytes)
        request = pb.CreateContainerRequest(
            pod_sandbox_id=pod_sandbox_id, sandbox_config=self._sandbox_config(sandbox_config),
            config=pb.ContainerConfig(
                metadata=pb.ContainerMetadata(name=config.name, attempt=config.attempt),
                image=pb.ImageSpec(image=config.image), command=list(config.command), args=list(config.args),
                working_dir=config.working_dir, envs=[pb.KeyValue(key=k, value=v) for k, v in config.env.items()],
                mounts=[pb.Mount(container_path=m.container_path, host_path=m.host_path, readonly=m.readonly)
                        for m in config.mounts],
                labels=dict(config.labels), annotations=dict(config.annotations),
                log_path=f"{config.name}/{config.attempt}.log", stdin=config.stdin, stdin_once=config.stdin_once,
                tty=config.tty, linux=pb.LinuxContainerConfig(
                    resources=resources, security_context=_security_context(config, sandbox_config))))
        r = await self._call(self._runtime.CreateContainer, request, timeout=max(self.timeout, 60),
                             what="CreateContainer")
        return str(r.container_id)

    async def start_container(self, container_id: str) -> None:
        await self._call(self._runtime.StartContainer, pb.StartContainerRequest(container_id=container_id),
                         timeout=max(self.timeout, 60), what="StartContainer")

    async def stop_container(self, container_id: str, timeout: float) -> None:
        try:
            await self._call(self._runtime.StopContainer,
                             pb.StopContainerRequest(container_id=container_id, timeout=int(max(0, timeout))),
                             timeout=timeout + self.timeout, what="StopContainer")
        except NotFoundError:
            pass

    async def remove_container(self, container_id: str) -> None:
        try:
            await self._call(self._runtime.RemoveContainer, pb.RemoveContainerRequest(container_id=container_id),
                             what="RemoveContainer")
        except NotFoundError:
            pass

    async def list_containers(self, *, pod_sandbox_id: str | None = None,
                              labels: Mapping[str, str] | None = None, brief: bool = False) -> list[ContainerInfo]:
        r = await self._call(self._runtime.ListContainers, pb.ListContainersRequest(filter=pb.ContainerFilter(
            pod_sandbox_id=pod_sandbox_id or "", label_selector=dict(labels or {}))), what="ListContainers")
        if brief:
            return [ContainerInfo(id=c.id, pod_sandbox_id=c.pod_sandbox_id, name=c.metadata.name,
                                  attempt=c.metadata.attempt, image=c.image.image, image_ref=c.image_ref,
                                  state=_CONTAINER_STATES[c.state], created_at=_seconds(c.created_at) or 0.0,
                                  labels=dict(c.labels), annotations=dict(c.annotations))
                    for c in r.containers]
        # ListContainers has no exit codes or times: ask for each container's status.
        statuses = await asyncio.gather(*(self.container_status(c.id, pod_sandbox_id=c.pod_sandbox_id)
                                          for c in r.containers), return_exceptions=True)
        return [s for s in statuses if isinstance(s, ContainerInfo)]

    async def container_status(self, container_id: str, *, pod_sandbox_id: str = "") -> ContainerInfo:
        r = await self._call(self._runtime.ContainerStatus, pb.ContainerStatusRequest(container_id=container_id),
                             what="ContainerStatus")
        s = r.status
        started, finished = _seconds(s.started_at), _seconds(s.finished_at)
        if started is not None and finished is not None and finished < started:
            finished = started  # a fast exit can be stamped a hair before its start
        return ContainerInfo(id=s.id, pod_sandbox_id=pod_sandbox_id,
                             name=s.metadata.name, attempt=s.metadata.attempt, image=s.image.image,
                             image_ref=s.image_ref, state=_CONTAINER_STATES[s.state],
                             created_at=_seconds(s.created_at) or 0.0, started_at=started, finished_at=finished,
                             exit_code=s.exit_code if s.state == pb.CONTAINER_EXITED else None,
                             reason=s.reason, message=s.message, labels=dict(s.labels),
                             annotations=dict(s.annotations), log_path=s.log_path)

    async def container_logs(self, container_id: str) -> list[LogLine]:
        status = await self.container_status(container_id)
        if not status.log_path:
            return []
        try:
            text = await asyncio.to_thread(Path(status.log_path).read_text, errors="replace")
        except FileNotFoundError:
            return []
        return parse_cri_log(text)

    async def exec_sync(self, container_id: str, cmd: list[str], timeout: float) -> tuple[int, str]:
        """Run `cmd` in the container; (exit code, combined output). Timeouts count as failures."""
        r = await self._call(self._runtime.ExecSync, pb.ExecSyncRequest(container_id=container_id, cmd=cmd,
                                                                          timeout=max(1, int(timeout))),
                             timeout=timeout + self.timeout, what="ExecSync")
        return int(r.exit_code), (r.stdout + r.stderr).decode(errors="replace")

    # --- streaming ---------------------------------------------------------------------------
    async def exec(self, container_id: str, cmd: list[str], *, tty: bool, stdin: bool, stdout: bool,
                   stderr: bool) -> str:
        """The streaming server's URL where `cmd` runs in the container once a client connects."""
        r = await self._call(self._runtime.Exec, pb.ExecRequest(container_id=container_id, cmd=cmd, tty=tty,
                                                                 stdin=stdin, stdout=stdout, stderr=stderr),
                             what="Exec")
        return str(r.url)

    async def attach(self, container_id: str, *, tty: bool, stdin: bool, stdout: bool, stderr: bool) -> str:
        """The streaming server's URL attaching to the container's main process."""
        r = await self._call(self._runtime.Attach, pb.AttachRequest(container_id=container_id, tty=tty, stdin=stdin,
                                                                     stdout=stdout, stderr=stderr),
                             what="Attach")
        return str(r.url)

    async def port_forward(self, pod_sandbox_id: str, ports: list[int] | None = None) -> str:
        """The streaming server's URL forwarding to the sandbox's ports (any port the client names)."""
        r = await self._call(self._runtime.PortForward,
                             pb.PortForwardRequest(pod_sandbox_id=pod_sandbox_id, port=list(ports or [])),
                             what="PortForward")
        return str(r.url)

    # --- images ------------------------------------------------------------------------------
    async def pull_image(self, image: str) -> str:
        try:
            r = await self._call(self._images.PullImage, pb.PullImageRequest(image=pb.ImageSpec(image=image)),
                                 timeout=300, what="PullImage")
        except NotFoundError as e:
            raise ImagePullError(str(e)) from None
        except CRIError as e:
            raise ImagePullError(str(e).removeprefix("PullImage: ")) from None
        return str(r.image_ref)

    async def image_status(self, image: str) -> ImageInfo | None:
        r = await self._call(self._images.ImageStatus, pb.ImageStatusRequest(image=pb.ImageSpec(image=image)),
                             what="ImageStatus")
        if not r.HasField("image"):
            return None
        i = r.image
        return ImageInfo(id=i.id, repo_tags=tuple(i.repo_tags), repo_digests=tuple(i.repo_digests), size=i.size)
