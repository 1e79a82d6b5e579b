"""Serving a streaming request with the protocols spoken here, for a `StreamingRuntime`.

`ProtocolStreamingHandler` is the `StreamingHandler` of nodes whose runtime is answered in
this process (the simulated runtime): it resolves the target first, so an unknown pod or
container, a stopped container or bad options get a plain HTTP error before any upgrade
(as upstream's kubelet answers them), then picks the protocol from the request:
a WebSocket upgrade gets the channel protocols (or the SPDY tunnel, for port-forward), any
other upgrade is taken as SPDY/3.1 (and refused with upstream's message if it is not).
"""

from __future__ import annotations

import logging
from typing import Protocol

from kubelet.streaming.portforward import (
    PortConnection,
    ports_from_query,
    serve_portforward_spdy,
    serve_portforward_websocket,
)
from kubelet.streaming.process_io import ProcessIO
from kubelet.streaming.remotecommand import options_from_query, serve_remotecommand_spdy, serve_remotecommand_websocket
from kubelet.streaming.target import StreamRequest, StreamTarget, TargetError
from kubelet.streaming.transport import SocketStream, write_http_error

__all__ = ["StreamingRuntime", "ProtocolStreamingHandler"]

logger = logging.getLogger(__name__)


class StreamingRuntime(Protocol):
    """What answers exec, attach and port-forward once the protocol is spoken (CRI's verbs)."""

    async def resolve(self, namespace: str, pod: str, container: str | None) -> StreamTarget:
        """The running container (or, with None, the pod); TargetError when there is none."""
        ...

    async def exec(self, target: StreamTarget, command: list[str], io: ProcessIO) -> int:
        """Run `command`, return its exit code; ExecError when it cannot be started."""
        ...

    async def attach(self, target: StreamTarget, io: ProcessIO) -> int:
        ...

    async def port_forward(self, target: StreamTarget, port: int, conn: PortConnection) -> None:
        """Carry `conn` to the pod's `port` until either side is done; PortForwardError if unreachable."""
        ...


class ProtocolStreamingHandler:
    """A `StreamingHandler` speaking every streaming protocol itself."""

    def __init__(self, runtime: StreamingRuntime) -> None:
        self.runtime = runtime

    async def __call__(self, request: StreamRequest, stream: SocketStream) -> None:
        try:
            await self._serve(request, stream)
        except TargetError as e:
            await write_http_error(stream, e.status, e.message)
        finally:
            await stream.aclose()

    async def _serve(self, request: StreamRequest, stream: SocketStream) -> None:
        if request.kind == "portforward":
            target = await self.runtime.resolve(request.namespace, request.pod, None)

            async def forward(port: int, conn: PortConnection) -> None:
                await self.runtime.port_forward(target, port, conn)

            if request.is_websocket:
                try:
                    ports = ports_from_query(request.query) if "port" in request.query else None
                except ValueError as e:
                    raise TargetError(400, str(e)) from None
                await serve_portforward_websocket(request.head, stream, ports, forward, pod=request.pod,
                                                  uid=target.pod_uid)
            else:
                await serve_portforward_spdy(request.headers, stream, forward, pod=request.pod, uid=target.pod_uid)
            return
        try:
            opts = options_from_query(request.query)
        except ValueError as e:
            raise TargetError(400, str(e)) from None
        command = request.command
        if request.kind == "exec" and not command:
            raise TargetError(400, "you must specify at least one command for the container")
        target = await self.runtime.resolve(request.namespace, request.pod, request.container)

        async def run(io: ProcessIO) -> int:
            if request.kind == "exec":
                return await self.runtime.exec(target, command, io)
            return await self.runtime.attach(target, io)

        logger.info("Streaming", extra={"verb": request.kind, "pod": f"{request.namespace}/{request.pod}",
                                        "container": request.container,
                                        "protocol": "websocket" if request.is_websocket else "spdy"})
        if request.is_websocket:
            await serve_remotecommand_websocket(request.head, stream, opts, run, command)
        else:
            await serve_remotecommand_spdy(request.headers, stream, opts, run, command)
