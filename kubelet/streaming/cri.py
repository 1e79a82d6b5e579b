"""Serving exec, attach and port-forward on a real node: the CRI runtime's streaming server does it.

Mirrors the kubelet's `server.go` getExec/getAttach/getPortForward with `proxyStream`:
1. read the options as upstream does (`input`, `output`, `error`, `tty`; `command` for exec;
   `ports` for a WebSocket port-forward) and resolve the pod and container through the
   runtime's labels (`lookup.resolve_target`);
2. ask the runtime for a streaming URL (CRI Exec/Attach/PortForward);
3. connect to that URL (containerd's streaming server, plain HTTP on localhost), replay the
   client's request head with the request-target replaced by the URL's path and query (and
   `Host` by the URL's, as Go's proxy does; every other header kept: Upgrade, Connection,
   Sec-WebSocket-*, X-Stream-Protocol-Version), then relay both directions byte for byte
   (`kube.httpstream.relay`, with half-close) until both are done. The streaming server answers the upgrade itself, so
   every protocol it speaks (SPDY/3.1; WebSocket channel protocols up to v4 for containerd
   1.6) reaches the client unchanged, and what it refuses is refused.
Everything refused before the relay starts gets a plain HTTP error (`write_http_error`):
400 for bad options or a container that is not running, 404 for an unknown pod or
container (or a CRI NOT_FOUND), 500 for another CRI failure, a request that is not an
upgrade ("Upgrade request required") or an unreachable streaming server, as upstream's
responder answers them.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Protocol
from urllib.parse import urlsplit

from kube.httpstream import relay
from kubelet.cri.interface import CRIError, NotFoundError
from kubelet.streaming.lookup import LabelledRuntime, resolve_target
from kubelet.streaming.portforward import ports_from_query
from kubelet.streaming.remotecommand import options_from_query
from kubelet.streaming.target import StreamRequest, TargetError
from kubelet.streaming.transport import SocketStream, write_http_error

__all__ = ["CRIStreamingRuntime", "CRIStreamingHandler", "replay_head"]

logger = logging.getLogger(__name__)


class CRIStreamingRuntime(LabelledRuntime, Protocol):
    """What the relay asks of the runtime (`RemoteRuntime`): the listings and the streaming URLs."""

    async def exec(self, container_id: str, cmd: list[str], *, tty: bool, stdin: bool, stdout: bool,
                   stderr: bool) -> str: ...

    async def attach(self, container_id: str, *, tty: bool, stdin: bool, stdout: bool, stderr: bool) -> str: ...

    async def port_forward(self, pod_sandbox_id: str, ports: list[int] | None = None) -> str: ...


class CRIStreamingHandler:
    """The `StreamingHandler` of CRI nodes: asks the runtime for a URL and relays the connection there."""

    def __init__(self, runtime: CRIStreamingRuntime, *, connect_timeout: float = 10.0) -> None:
        self.runtime = runtime
        self.connect_timeout = connect_timeout

    async def __call__(self, request: StreamRequest, stream: SocketStream) -> None:
        try:
            url = await self._streaming_url(request)
            if "upgrade" not in request.header("connection").lower():
                raise TargetError(500, "Upgrade request required")
            await self._proxy(request, stream, url)
        except TargetError as e:
            await write_http_error(stream, e.status, e.message)
        finally:
            await stream.aclose()

    async def _streaming_url(self, request: StreamRequest) -> str:
        try:
            if request.kind == "portforward":
                return await self._port_forward_url(request)
            return await self._remotecommand_url(request)
        except NotFoundError as e:
            raise TargetError(404, str(e)) from None
        except CRIError as e:
            raise TargetError(500, str(e)) from None

    async def _port_forward_url(self, request: StreamRequest) -> str:
        ports: list[int] = []
        if request.is_websocket:
            try:
                ports = ports_from_query(request.query)
            except ValueError as e:
                raise TargetError(400, str(e)) from None
        target = await resolve_target(self.runtime, namespace=request.namespace, pod=request.pod, container=None)
        return await self.runtime.port_forward(target.sandbox_id, ports)

    async def _remotecommand_url(self, request: StreamRequest) -> str:
        try:
            opts = options_from_query(request.query)
        except ValueError as e:
            raise TargetError(400, str(e)) from None
        if request.kind == "exec" and not request.command:
            raise TargetError(400, "you must specify at least one command for the container")
        target = await resolve_target(self.runtime, namespace=request.namespace, pod=request.pod,
                                      container=request.container)
        if request.kind == "exec":
            return await self.runtime.exec(target.container_id, request.command, tty=opts.tty, stdin=opts.stdin,
                                           stdout=opts.stdout, stderr=opts.stderr)
        return await self.runtime.attach(target.container_id, tty=opts.tty, stdin=opts.stdin, stdout=opts.stdout,
                                         stderr=opts.stderr)

    async def _proxy(self, request: StreamRequest, stream: SocketStream, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TargetError(500, f"the runtime's streaming URL {url!r} is not an http(s) URL")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                parts.hostname, port, ssl=ssl.create_default_context() if parts.scheme == "https" else None),
                self.connect_timeout)
        except (OSError, TimeoutError) as e:
            raise TargetError(500, f"error dialing the streaming server {parts.netloc}: {e}") from None
        logger.info("Relaying to the runtime's streaming server",
                    extra={"verb": request.kind, "pod": f"{request.namespace}/{request.pod}",
                           "container": request.container, "server": parts.netloc})
        backend = SocketStream(reader, writer)
        try:
            target = parts.path or "/"
            if parts.query:
                target += "?" + parts.query
            await backend.send(replay_head(request.head, target=target, host=parts.netloc))
            await relay(stream, backend)
        except (ConnectionError, OSError):
            pass
        finally:
            await backend.aclose()


def replay_head(head: bytes, *, target: str, host: str) -> bytes:
    """`head` (request line + headers + blank line) sent to `target` on `host`; other headers unchanged."""
    lines = head.split(b"\r\n")
    method, _, rest = lines[0].partition(b" ")
    version = rest.rpartition(b" ")[2] if b" " in rest else b"HTTP/1.1"
    out = [b"%s %s %s" % (method, target.encode(), version)]
    for line in lines[1:]:
        if line.split(b":", 1)[0].strip().lower() == b"host":
            line = b"Host: " + host.encode()
        out.append(line)
    return b"\r\n".join(out)
