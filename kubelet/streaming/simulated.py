"""What exec, attach and port-forward reach on a simulated node: in-process stand-ins.

`SimulatedStreamingRuntime` answers the three verbs for the containers of a
`SimulatedRuntime` (found by the kubelet's runtime labels, as CRI's Exec is addressed):
- exec runs `kubelet.streaming.shell` against the container's environment and hostname;
- attach echoes what arrives on stdin back on stdout (a process that reads and prints its
  input) and follows the container's log lines that appear after attaching; it ends with the
  container's exit code when the container exits;
- port-forward answers on every port: an HTTP/1.1 request gets `200 OK` with the body
  `<namespace>/<pod>:<port> <METHOD> <path>` (keep-alive honoured, so several requests can
  share one connection), anything else is echoed back byte for byte.
A container must be running for exec and attach (else 400, as CRI's FailedPrecondition is
mapped); an unknown pod or container is 404 with upstream's words (`lookup.resolve_target`).
"""

from __future__ import annotations

import asyncio

from kubelet.cri.interface import ContainerState, NotFoundError
from kubelet.cri.simulated import SimulatedRuntime
from kubelet.streaming.lookup import resolve_target
from kubelet.streaming.portforward import PortConnection, PortForwardError
from kubelet.streaming.process_io import ProcessIO
from kubelet.streaming.remotecommand import ExecError
from kubelet.streaming.shell import Shell
from kubelet.streaming.target import StreamTarget

__all__ = ["SimulatedStreamingRuntime"]

_ATTACH_POLL = 0.2
_MAX_HEAD = 64 * 1024


class SimulatedStreamingRuntime:
    """The `StreamingRuntime` of simulated nodes."""

    def __init__(self, runtime: SimulatedRuntime) -> None:
        self.runtime = runtime

    async def resolve(self, namespace: str, pod: str, container: str | None) -> StreamTarget:
        return await resolve_target(self.runtime, namespace=namespace, pod=pod, container=container)

    def _running(self, target: StreamTarget) -> bool:
        try:
            return self.runtime.container_state(target.container_id) == ContainerState.RUNNING
        except NotFoundError:
            return False

    async def exec(self, target: StreamTarget, command: list[str], io: ProcessIO) -> int:
        try:
            config = self.runtime.container_config(target.container_id)
        except NotFoundError:
            raise ExecError(f'container "{target.container}" is gone') from None
        files = self.runtime.container_files(target.container_id)
        shell = Shell(io, hostname=self.runtime.sandbox_hostname(target.sandbox_id) or target.pod, env=config.env,
                      files=files, list_dir=files.list_dir)
        return await shell.run(command)

    async def attach(self, target: StreamTarget, io: ProcessIO) -> int:
        echo = asyncio.ensure_future(self._echo(io)) if io.has_stdin else None
        try:
            seen = len(self.runtime.container_logs(target.container_id))
            while True:
                await asyncio.sleep(_ATTACH_POLL)
                try:
                    lines = self.runtime.container_logs(target.container_id)
                except NotFoundError:
                    return 0
                for line in lines[seen:]:
                    await io.stdout((line.text + ("\r\n" if io.tty else "\n")).encode())
                seen = len(lines)
                if not self._running(target):
                    return self.runtime.container_exit_code(target.container_id) or 0
        finally:
            if echo is not None:
                echo.cancel()

    @staticmethod
    async def _echo(io: ProcessIO) -> None:
        while chunk := await io.read_stdin():
            await io.stdout(chunk.replace(b"\r", b"\r\n") if io.tty else chunk)

    async def port_forward(self, target: StreamTarget, port: int, conn: PortConnection) -> None:
        if self.runtime.sandbox_ip(target.sandbox_id) is None:
            raise PortForwardError(f"pod {target.pod} has no network")
        first = await conn.read()
        if not first:
            return
        if not _looks_like_http(first):
            await conn.write(first)
            while chunk := await conn.read():
                await conn.write(chunk)
            return
        await _serve_http(conn, bytearray(first), f"{target.namespace}/{target.pod}:{port}")


def _looks_like_http(data: bytes) -> bool:
    method = data.split(b" ", 1)[0]
    return method in (b"GET", b"HEAD", b"POST", b"PUT", b"PATCH", b"DELETE", b"OPTIONS")


async def _serve_http(conn: PortConnection, buf: bytearray, where: str) -> None:
    """Answer HTTP/1.1 requests on one connection until the client closes it or asks to."""
    while True:
        while b"\r\n\r\n" not in buf:
            if len(buf) > _MAX_HEAD:
                return
            chunk = await conn.read()
            if not chunk:
                return
            buf += chunk
        head, _, rest = bytes(buf).partition(b"\r\n\r\n")
        lines = head.decode(errors="replace").split("\r\n")
        method, _, tail = lines[0].partition(" ")
        path, _, version = tail.rpartition(" ") if " " in tail else (tail, "", "HTTP/1.0")
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        length = int(headers.get("content-length", "0") or 0)
        while len(rest) < length:
            chunk = await conn.read()
            if not chunk:
                return
            rest += chunk
        buf = bytearray(rest[length:])
        close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
        body = f"{where} {method} {path}\n".encode()
        response = [f"{version or 'HTTP/1.1'} 200 OK", "Content-Type: text/plain; charset=utf-8",
                    f"Content-Length: {len(body)}", "Server: picokube-simulated"]
        if close:
            response.append("Connection: close")
        await conn.write(("\r\n".join(response) + "\r\n\r\n").encode() + (b"" if method == "HEAD" else body))
        if close:
            return
