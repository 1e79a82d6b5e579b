"""port-forward over SPDY (plain or tunnelled in a WebSocket) or WebSocket channels.

Mirrors the kubelet's cri/streaming/portforward (httpstream.go, websocket.go) and the
WebSocket tunnel of KEP-4006:
- SPDY (`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`), and the same
  SPDY carried in the binary messages of a WebSocket with subprotocol
  `SPDY/3.1+portforward.k8s.io` (kubectl 1.31+): for every local connection the client opens
  two streams with one `requestID`, `streamType` `error` and `data`, each with a `port`
  header; once both are there the data stream is forwarded to the port, and whatever goes
  wrong is written as text on the error stream. Both are closed (FIN) when the forward ends;
  the connection carries any number of them until the client leaves.
- WebSocket channels (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io` or none; the Python
  client's port-forward): the ports come from the `ports` query, each gets a data channel 2i
  and an error channel 2i+1, both opened by a first message holding the port as a
  little-endian uint16; one forward per port, and the WebSocket closes when all are done.
The forwarding itself is the caller's `Forwarder`: it gets the port and a `PortConnection`
(read the client's bytes, b"" at EOF; write the port's answer) and raises
`PortForwardError` when the port cannot be reached.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import struct
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

from kubelet.streaming.remotecommand import check_spdy_upgrade, spdy_upgrade_response
from kubelet.streaming.spdy import RST_PROTOCOL_ERROR
from kubelet.streaming.spdy_session import SpdyConnection, SpdyStream
from kubelet.streaming.transport import ByteStream, SocketStream, write_http_error
from kubelet.streaming.websocket import WebSocket, WebSocketBytes, accept_websocket

__all__ = [
    "PortConnection", "PortForwardError", "Forwarder", "ports_from_query",
    "serve_portforward_spdy", "serve_portforward_websocket",
    "PORTFORWARD_V1", "SPDY_TUNNEL", "WEBSOCKET_PORTFORWARD_PROTOCOLS",
]

logger = logging.getLogger(__name__)

PORTFORWARD_V1 = "portforward.k8s.io"
SPDY_TUNNEL = "SPDY/3.1+portforward.k8s.io"
_V4, _V4_BASE64 = "v4.channel.k8s.io", "v4.base64.channel.k8s.io"
WEBSOCKET_PORTFORWARD_PROTOCOLS = (SPDY_TUNNEL, _V4, _V4_BASE64, "")
SPDY_PORTFORWARD_PROTOCOLS = (PORTFORWARD_V1,)


class PortConnection(Protocol):
    async def read(self) -> bytes:
        """The client's next bytes; b"" once it closed its side."""
        ...

    async def write(self, data: bytes) -> None:
        ...


class PortForwardError(Exception):
    """The port could not be reached; the message goes to the client's error stream."""


Forwarder = Callable[[int, PortConnection], Awaitable[None]]


def ports_from_query(query: Mapping[str, Sequence[str]]) -> list[int]:
    """Upstream's NewV4Options: every `port` value, comma-separated, each 1..65535; ValueError if not.

    The API server turns the client's `ports` (PodPortForwardOptions) into this `port` parameter.
    """
    values = query.get("port") or []
    if not values:
        raise ValueError('query parameter "port" is required')
    ports = []
    for value in values:
        if not value:
            raise ValueError('query parameter "port" cannot be empty')
        for p in value.split(","):
            if not p.isdigit() or int(p) > 65535:
                raise ValueError(f'unable to parse "{value}" as a port: invalid syntax')
            if int(p) < 1:
                raise ValueError(f'port "{value}" must be > 0')
            ports.append(int(p))
    return ports


def _error_message(port: int, pod: str, uid: str, err: Exception) -> str:
    return f"error forwarding port {port} to pod {pod}, uid {uid}: {err}"


# --- SPDY (plain or tunnelled) ----------------------------------------------------------------
async def serve_portforward_spdy(headers: Mapping[str, Sequence[str]], stream: SocketStream, forward: Forwarder, *,
                                 pod: str, uid: str) -> None:
    """Serve port-forward over a SPDY/3.1 upgrade until the client leaves."""
    protocol = await check_spdy_upgrade(headers, stream, SPDY_PORTFORWARD_PROTOCOLS)
    if protocol is None:
        return
    await stream.send(spdy_upgrade_response(protocol))
    await _spdy_session(stream, forward, pod=pod, uid=uid)


async def _spdy_session(transport: ByteStream, forward: Forwarder, *, pod: str, uid: str) -> None:
    conn = SpdyConnection(transport)
    reader = asyncio.ensure_future(conn.run())
    pairs: dict[str, dict[str, SpdyStream]] = {}
    tasks: set[asyncio.Task[None]] = set()
    try:
        while (s := await conn.accept()) is not None:
            kind, port = s.header("streamtype"), s.header("port")
            if kind not in ("data", "error") or not port.isdigit() or not 0 < int(port) < 65536:
                await s.reset(RST_PROTOCOL_ERROR)
                continue
            request_id = s.header("requestid") or str(s.stream_id if kind == "error" else s.stream_id - 2)
            pair = pairs.setdefault(request_id, {})
            pair[kind] = s
            if len(pair) == 2:
                del pairs[request_id]
                task = asyncio.ensure_future(_forward_pair(conn, pair["data"], pair["error"], int(port), forward,
                                                           pod=pod, uid=uid))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
    finally:
        for task in tasks:
            task.cancel()
        reader.cancel()
        await conn.close()


async def _forward_pair(conn: SpdyConnection, data: SpdyStream, error: SpdyStream, port: int, forward: Forwarder,
                        *, pod: str, uid: str) -> None:
    try:
        await forward(port, data)
    except PortForwardError as e:
        with contextlib.suppress(ConnectionError, OSError):
            await error.write(_error_message(port, pod, uid, e).encode())
    except (ConnectionError, OSError):
        pass
    finally:
        await data.close()
        await error.close()
        conn.remove(data)
        conn.remove(error)


# --- WebSocket ---------------------------------------------------------------------------------
class _ChannelConnection:
    """One port's data channel on a channel WebSocket, as a `PortConnection`."""

    def __init__(self, ws: WebSocket, channel: int, encode: Callable[[int, bytes], Awaitable[None]]) -> None:
        self.ws, self.channel, self._encode = ws, channel, encode
        self.incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self._eof = False

    async def read(self) -> bytes:
        if self._eof:
            return b""
        data = await self.incoming.get()
        self._eof = not data
        return data

    async def write(self, data: bytes) -> None:
        if data:
            await self._encode(self.channel, data)


async def serve_portforward_websocket(head: bytes, stream: SocketStream, ports: Sequence[int] | None,
                                      forward: Forwarder, *, pod: str, uid: str) -> None:
    """Serve port-forward over the WebSocket in `head`'s request (channels, or the SPDY tunnel)."""
    ws = await accept_websocket(head, stream, WEBSOCKET_PORTFORWARD_PROTOCOLS)
    if ws is None:
        return
    if ws.subprotocol == SPDY_TUNNEL:
        await _spdy_session(WebSocketBytes(ws), forward, pod=pod, uid=uid)
        return
    if not ports:
        await ws.close(1008, 'query parameter "port" is required')
        return
    b64 = "base64" in ws.subprotocol

    async def encode(channel: int, data: bytes) -> None:
        if b64:
            await ws.send_text(chr(ord("0") + channel) + base64.b64encode(data).decode())
        else:
            await ws.send(bytes([channel]) + data)

    conns = [_ChannelConnection(ws, 2 * i, encode) for i in range(len(ports))]
    for i, port in enumerate(ports):
        await encode(2 * i, struct.pack("<H", port))
        await encode(2 * i + 1, struct.pack("<H", port))
    reader = asyncio.ensure_future(_read_port_channels(ws, conns, b64))

    async def one(i: int, port: int) -> None:
        try:
            await forward(port, conns[i])
        except PortForwardError as e:
            with contextlib.suppress(ConnectionError, OSError):
                await encode(2 * i + 1, _error_message(port, pod, uid, e).encode())
        except (ConnectionError, OSError):
            pass

    try:
        await asyncio.gather(*(one(i, p) for i, p in enumerate(ports)))
    finally:
        reader.cancel()
        await ws.close()


async def _read_port_channels(ws: WebSocket, conns: list[_ChannelConnection], b64: bool) -> None:
    try:
        while (message := await ws.receive()) is not None:
            if not message:
                continue
            channel, data = (message[0] - ord("0"), base64.b64decode(message[1:])) if b64 else \
                (message[0], message[1:])
            if channel % 2 == 0 and channel // 2 < len(conns) and data:
                conns[channel // 2].incoming.put_nowait(data)
    except ValueError:
        logger.debug("Undecodable port-forward message")
    finally:
        for c in conns:
            c.incoming.put_nowait(b"")


async def refuse(stream: SocketStream, status: int, message: str) -> None:
    """Answer a request that cannot be served before any upgrade."""
    await write_http_error(stream, status, message)
