"""The server side of a WebSocket (RFC 6455) on an upgraded connection, built on wsproto.

`accept_websocket` completes the handshake for a request whose head was already read (the
kubelet's HTTP server hands the bytes over), choosing the subprotocol the way
k8s.io/apiserver's wsstream does: the first of the client's `Sec-WebSocket-Protocol` values
the server supports (no header at all counts as the empty protocol ""). A request offering
none of them is refused with 400 and no upgrade, which is what makes client-go fall back to
SPDY. After the handshake `WebSocket` sends and receives whole messages; pings are answered
and the close handshake is completed here, so callers only see data messages and, at the end,
None.

`WebSocketBytes` presents a WebSocket as a `ByteStream` (each binary message a slice of one
byte stream): the transport of SPDY tunnelled over WebSocket.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from kubelet.streaming.transport import SocketStream

__all__ = ["WebSocket", "WebSocketBytes", "accept_websocket", "negotiate_subprotocol", "NORMAL_CLOSURE"]

logger = logging.getLogger(__name__)

NORMAL_CLOSURE = 1000


def negotiate_subprotocol(offered: Sequence[str], supported: Sequence[str]) -> str | None:
    """wsstream's rule: the first offered protocol the server supports; "" when none was offered."""
    for protocol in offered or [""]:
        if protocol in supported:
            return protocol
    return None


class WebSocket:
    """An accepted WebSocket; `send` may be called from several tasks (sends are serialized)."""

    def __init__(self, conn: WSConnection, stream: SocketStream, subprotocol: str) -> None:
        self._conn, self._stream = conn, stream
        self.subprotocol = subprotocol
        self._send_lock = asyncio.Lock()
        self._parts: list[bytes] = []
        self.closed = False

    async def _write(self, data: bytes) -> None:
        async with self._send_lock:
            await self._stream.send(data)

    async def send(self, data: bytes) -> None:
        """Send one binary message; ConnectionError once the connection is closed."""
        if self.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self._write(self._conn.send(BytesMessage(data=data)))

    async def send_text(self, text: str) -> None:
        if self.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self._write(self._conn.send(TextMessage(data=text)))

    async def receive(self) -> bytes | None:
        """The next whole data message (text as UTF-8 bytes), or None once the connection is closed."""
        while True:
            for event in self._conn.events():
                if isinstance(event, Message):
                    part = event.data.encode() if isinstance(event.data, str) else bytes(event.data)
                    self._parts.append(part)
                    if event.message_finished:
                        message, self._parts = b"".join(self._parts), []
                        return message
                elif isinstance(event, Ping):
                    await self._write(self._conn.send(event.response()))
                elif isinstance(event, CloseConnection):
                    if not self.closed:
                        self.closed = True
                        try:
                            await self._write(self._conn.send(event.response()))
                        except (LocalProtocolError, ConnectionError, OSError):
                            pass
                    return None
            if self.closed:
                return None
            data = await self._stream.receive()
            try:
                self._conn.receive_data(data or None)
            except RemoteProtocolError as e:
                logger.debug("WebSocket protocol error", extra={"error": str(e)})
                self.closed = True
                return None

    async def close(self, code: int = NORMAL_CLOSURE, reason: str = "") -> None:
        """Start the close handshake (if not done) and close the socket."""
        if not self.closed:
            self.closed = True
            try:
                await self._write(self._conn.send(CloseConnection(code=code, reason=reason or None)))
            except (LocalProtocolError, ConnectionError, OSError):
                pass
        await self._stream.aclose()


async def accept_websocket(head: bytes, stream: SocketStream, supported: Sequence[str]) -> WebSocket | None:
    """Complete the handshake of the request in `head`; None (after answering 400) when refused."""
    conn = WSConnection(ConnectionType.SERVER)
    conn.receive_data(head)
    request = next((e for e in conn.events() if isinstance(e, Request)), None)
    if request is None:
        await stream.aclose()
        return None
    chosen = negotiate_subprotocol(request.subprotocols, supported)
    if chosen is None:
        body = (f"requested protocol(s) are not supported: {list(request.subprotocols)}; "
                f"supports {list(supported)}").encode()
        await stream.send(conn.send(RejectConnection(status_code=400, has_body=True, headers=[
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())])))
        await stream.send(conn.send(RejectData(data=body, body_finished=True)))
        await stream.aclose()
        return None
    await stream.send(conn.send(AcceptConnection(subprotocol=chosen or None)))
    return WebSocket(conn, stream, chosen)


class WebSocketBytes:
    """A `ByteStream` whose bytes travel as binary WebSocket messages (SPDY's tunnel)."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws

    async def receive(self) -> bytes:
        while True:
            message = await self.ws.receive()
            if message is None:
                return b""
            if message:
                return message

    async def send(self, data: bytes) -> None:
        await self.ws.send(data)

    async def aclose(self) -> None:
        await self.ws.close()
