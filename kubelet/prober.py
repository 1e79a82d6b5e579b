"""Probes: liveness, readiness and startup, with exec, httpGet and tcpSocket, as the kubelet runs them.

Mirrors pkg/kubelet/prober (prober.go, worker.go, results_manager.go):
- one worker task per (container instance, probe kind) while the container runs; a new
  instance (a restart) gets fresh workers, so results never leak across restarts;
- a worker waits `initialDelaySeconds`, then probes every `periodSeconds` (default 10) with a
  `timeoutSeconds` deadline (default 1); the result flips to success after
  `successThreshold` (1) consecutive successes and to failure after `failureThreshold` (3)
  consecutive failures; readiness starts as failure, liveness and startup as unknown;
- liveness and readiness probes wait until the startup probe (if any) has succeeded;
- exec runs the command in the container (CRI ExecSync; exit 0 is success); httpGet sends
  `GET <path>` to the pod IP (or `host`) and port (a number or a container port name) and
  succeeds on a status from 200 to 399; tcpSocket succeeds when the port accepts a
  connection;
- every change of a result calls `on_change(pod_key)`, so the pod is synced (readiness into
  its status, a failed liveness into a restart). Results are in memory: a restarted kubelet
  probes again from the start, as upstream's does.
With the simulated runtime there is nothing to connect to: httpGet and tcpSocket succeed
while the container runs, exec follows the simulated runtime's `exec_sync`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from kube.api import Container, Pod, Probe
from kubelet.cri.interface import CRIError, RuntimeService

__all__ = ["ProbeManager", "ProbeKind", "Result"]

logger = logging.getLogger(__name__)


class ProbeKind(str, Enum):
    LIVENESS = "Liveness"
    READINESS = "Readiness"
    STARTUP = "Startup"


class Result(str, Enum):
    UNKNOWN = "unknown"
    SUCCESS = "success"
    FAILURE = "failure"


@dataclass
class _Worker:
    task: asyncio.Task[None]
    result: Result
    message: str = ""


def _probe_of(container: Container, kind: ProbeKind) -> Probe | None:
    return {ProbeKind.LIVENESS: container.liveness_probe, ProbeKind.READINESS: container.readiness_probe,
            ProbeKind.STARTUP: container.startup_probe}[kind]


def _resolve_port(port: int | str, container: Container) -> int:
    if isinstance(port, int):
        return port
    if port.isdigit():
        return int(port)
    for p in container.ports or []:
        if p.name == port:
            return p.container_port
    raise ValueError(f"port {port!r} is not a named port of container {container.name}")


class ProbeManager:
    """The probe workers of one kubelet."""

    def __init__(self, runtime: RuntimeService, on_change: Callable[[str], None], *, simulated: bool = False,
                 on_failure: Callable[[Pod, str, ProbeKind, str], None] | None = None) -> None:
        self.runtime, self.on_change, self.simulated = runtime, on_change, simulated
        self.on_failure = on_failure
        self._workers: dict[tuple[str, ProbeKind], _Worker] = {}  # (container id, kind)

    # --- what the kubelet asks -------------------------------------------------------------------
    def result(self, container_id: str, kind: ProbeKind) -> Result:
        worker = self._workers.get((container_id, kind))
        return worker.result if worker is not None else Result.UNKNOWN

    def ready(self, container: Container, container_id: str) -> bool:
        """Readiness of a running container: its readiness probe's result, after startup."""
        if container.startup_probe is not None and self.result(container_id, ProbeKind.STARTUP) != Result.SUCCESS:
            return False
        if container.readiness_probe is None:
            return True
        return self.result(container_id, ProbeKind.READINESS) == Result.SUCCESS

    def started(self, container: Container, container_id: str) -> bool:
        return container.startup_probe is None or self.result(container_id, ProbeKind.STARTUP) == Result.SUCCESS

    def liveness_failed(self, container_id: str) -> bool:
        return self.result(container_id, ProbeKind.LIVENESS) == Result.FAILURE

    # --- keeping workers in line -----------------------------------------------------------------
    def sync(self, pod: Pod, running: dict[str, str], pod_ip: str | None) -> None:
        """Probe exactly the running containers: `running` maps container name -> container id."""
        wanted: set[tuple[str, ProbeKind]] = set()
        for container in pod.spec.containers:
            cid = running.get(container.name)
            if cid is None:
                continue
            for kind in ProbeKind:
                probe = _probe_of(container, kind)
                if probe is None:
                    continue
                wanted.add((cid, kind))
                if (cid, kind) not in self._workers:
                    initial = Result.FAILURE if kind == ProbeKind.READINESS else Result.UNKNOWN
                    task = asyncio.create_task(self._run(pod, container, cid, kind, probe, pod_ip))
                    self._workers[(cid, kind)] = _Worker(task, initial)
        live = set(running.values())
        for key in [k for k in self._workers if k[0] in live and k not in wanted]:
            self._stop(key)

    def forget_container(self, container_id: str) -> None:
        """Stop every worker of one container instance (it is being killed)."""
        for key in [k for k in self._workers if k[0] == container_id]:
            self._stop(key)

    def forget_containers(self, live_ids: set[str]) -> None:
        """Stop the workers of every container instance not in `live_ids`."""
        for key in [k for k in self._workers if k[0] not in live_ids]:
            self._stop(key)

    def _stop(self, key: tuple[str, ProbeKind]) -> None:
        worker = self._workers.pop(key, None)
        if worker is not None:
            worker.task.cancel()

    async def close(self) -> None:
        for key in list(self._workers):
            self._stop(key)

    # --- one worker ------------------------------------------------------------------------------
    async def _run(self, pod: Pod, container: Container, cid: str, kind: ProbeKind, probe: Probe,
                   pod_ip: str | None) -> None:
        period = max(1, probe.period_seconds or 10)
        success_needed = max(1, probe.success_threshold or 1)
        failure_needed = max(1, probe.failure_threshold or 3)
        successes = failures = 0
        await asyncio.sleep(probe.initial_delay_seconds or 0)
        while True:
            if kind != ProbeKind.STARTUP and container.startup_probe is not None and \
                    self.result(cid, ProbeKind.STARTUP) != Result.SUCCESS:
                await asyncio.sleep(period)
                continue
            ok, message = await self._probe_once(container, cid, probe, pod_ip)
            successes, failures = (successes + 1, 0) if ok else (0, failures + 1)
            worker = self._workers.get((cid, kind))
            if worker is None:
                return
            new = worker.result
            if ok and successes >= success_needed:
                new = Result.SUCCESS
            elif not ok and failures >= failure_needed:
                new = Result.FAILURE
            if not ok and self.on_failure is not None:
                self.on_failure(pod, container.name, kind, message)
            if new != worker.result:
                worker.result, worker.message = new, message
                logger.info("Probe result changed", extra={"pod": pod.key, "container": container.name,
                                                           "probe": kind.value, "result": new.value})
                self.on_change(pod.key)
            if kind == ProbeKind.STARTUP and new == Result.SUCCESS:
                return  # startup probes stop once they succeeded
            await asyncio.sleep(period)

    async def _probe_once(self, container: Container, cid: str, probe: Probe,
                          pod_ip: str | None) -> tuple[bool, str]:
        timeout = max(1, probe.timeout_seconds or 1)
        try:
            if probe.exec is not None:
                code, output = await self.runtime.exec_sync(cid, list(probe.exec.command or []), timeout)
                return code == 0, output.strip() or f"command exited {code}"
            if probe.http_get is not None:
                if self.simulated:
                    return True, ""
                port = _resolve_port(probe.http_get.port, container)
                host = probe.http_get.host or pod_ip or "127.0.0.1"
                return await asyncio.wait_for(_http_get(host, port, probe.http_get.path or "/"), timeout)
            if probe.tcp_socket is not None:
                if self.simulated:
                    return True, ""
                port = _resolve_port(probe.tcp_socket.port, container)
                host = probe.tcp_socket.host or pod_ip or "127.0.0.1"
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
                writer.close()
                return True, ""
        except TimeoutError:
            return False, f"timeout after {timeout}s"
        except (OSError, CRIError, ValueError) as e:
            return False, str(e)
        return True, ""


async def _http_get(host: str, port: int, path: str) -> tuple[bool, str]:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nUser-Agent: kube-probe/1.30\r\n\r\n".encode())
        await writer.drain()
        status_line = (await reader.readline()).decode(errors="replace").split()
    finally:
        writer.close()
    if len(status_line) < 2 or not status_line[1].isdigit():
        return False, "malformed HTTP response"
    code = int(status_line[1])
    return 200 <= code < 400, f"HTTP probe failed with statuscode: {code}"
