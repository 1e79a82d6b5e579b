"""A client WebSocket to the API server (or a kubelet), for exec, attach and port-forward.

client-go's `transport/websocket` in miniature, on wsproto: `connect_websocket` opens a TLS
connection with the kubeconfig's credentials (bearer token or client certificate), asks for
the given subprotocols in order of preference, and returns a `ChannelWebSocket` speaking the
channel framing (one channel byte, then data; `close_channel` sends v5's `[255, channel]`).
A refused upgrade raises the `ApiError` of the server's Status body (or of its status code),
as client-go surfaces it. Pings from the server are answered; a close from the server ends
`receive()` with None.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import Sequence
from urllib.parse import urlencode, urlsplit

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
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from kube.client.config import ClientConfig
from kube.errors import error_from_status

__all__ = ["ChannelWebSocket", "connect_websocket", "CLOSE_CHANNEL"]

CLOSE_CHANNEL = 255


class ChannelWebSocket:
    """An open channel WebSocket; `send`/`close_channel` may be called from several tasks."""

    def __init__(self, conn: WSConnection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 subprotocol: str) -> None:
        self._conn, self._reader, self._writer = conn, reader, writer
        self.subprotocol = subprotocol
        self._lock = asyncio.Lock()
        self._parts: list[bytes] = []
        self.closed = False

    async def _write(self, data: bytes) -> None:
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def send(self, channel: int, data: bytes) -> None:
        if self.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self._write(self._conn.send(BytesMessage(data=bytes([channel]) + data)))

    async def close_channel(self, channel: int) -> None:
        """v5's close signal: the server reads EOF on `channel` (stdin)."""
        await self.send(CLOSE_CHANNEL, bytes([channel]))

    async def receive(self) -> tuple[int, bytes] | None:
        """The next (channel, data) message; None once the connection is closed."""
        while True:
            for event in self._conn.events():
                if isinstance(event, Message):
                    data = event.data.encode() if isinstance(event.data, str) else bytes(event.data)
                    self._parts.append(data)
                    if event.message_finished:
                        message, self._parts = b"".join(self._parts), []
                        if message:
                            return message[0], message[1:]
                elif isinstance(event, Ping):
                    await self._write(self._conn.send(event.response()))
                elif isinstance(event, CloseConnection):
                    if not self.closed:
                        self.closed = True
                        with contextlib.suppress(LocalProtocolError, ConnectionError, OSError):
                            await self._write(self._conn.send(event.response()))
                    return None
            if self.closed:
                return None
            try:
                data = await self._reader.read(65536)
                self._conn.receive_data(data or None)
            except (RemoteProtocolError, ConnectionError, OSError):
                self.closed = True
                return None

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(LocalProtocolError, ConnectionError, OSError):
                await self._write(self._conn.send(CloseConnection(code=1000)))
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError, ssl.SSLError):
            await asyncio.wait_for(self._writer.wait_closed(), 2)


async def connect_websocket(config: ClientConfig, path: str, params: Sequence[tuple[str, str]],
                            protocols: Sequence[str]) -> ChannelWebSocket:
    """Upgrade `path?params` to a WebSocket; ApiError when the server refuses (its Status)."""
    url = urlsplit(config.server)
    tls = url.scheme == "https"
    port = url.port or (443 if tls else 80)
    context = config.ssl_context()
    reader, writer = await asyncio.open_connection(
        url.hostname, port, ssl=context if isinstance(context, ssl.SSLContext) else None,
        server_hostname=url.hostname if tls else None)
    conn = WSConnection(ConnectionType.CLIENT)
    headers = [(b"authorization", f"Bearer {config.token}".encode())] if config.token else []
    target = f"{url.path.rstrip('/')}{path}?{urlencode(list(params))}"
    writer.write(conn.send(Request(host=url.netloc, target=target, subprotocols=list(protocols),
                                   extra_headers=headers)))
    await writer.drain()
    status, body = 0, b""
    while True:
        data = await reader.read(65536)
        try:
            conn.receive_data(data or None)
        except RemoteProtocolError as e:
            writer.close()
            raise ConnectionResetError(f"the upgrade to a WebSocket failed: {e}") from None
        for event in conn.events():
            if isinstance(event, AcceptConnection):
                return ChannelWebSocket(conn, reader, writer, event.subprotocol or "")
            if isinstance(event, RejectConnection):
                status = event.status_code
                if not event.has_body:
                    return _refused(writer, status, body)
            elif isinstance(event, RejectData):
                body += bytes(event.data)
                if event.body_finished:
                    return _refused(writer, status, body)
        if not data:
            return _refused(writer, status or 500, body or b"the server closed the connection during the upgrade")


def _refused(writer: asyncio.StreamWriter, status: int, body: bytes) -> ChannelWebSocket:
    writer.close()
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        raise error_from_status(doc, http_code=status)
    raise error_from_status(None, http_code=status, fallback_message=body.decode(errors="replace").strip())
