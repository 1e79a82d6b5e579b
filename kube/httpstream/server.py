"""An HTTP/1.1 server protocol whose upgrade requests reach the ASGI app, which may take the socket.

uvicorn hands an ASGI app only WebSocket upgrades, and only as WebSocket sessions it speaks
itself; an `Upgrade: SPDY/3.1` request is treated as plain HTTP and its upgrade ignored. A
relaying server needs neither: it wants the request, then the raw connection. So
`UpgradeProtocol` (uvicorn's h11 protocol) treats every request that asks to upgrade alike:
it detaches the connection from h11 and runs the app on that request as an `http` scope with
an empty body, plus `scope["extensions"][UPGRADE]["take"]`. The app either

- answers normally (its response is written as HTTP/1.1 with `Connection: close`, then the
  connection closes), which is how authentication, authorization and lookup failures are
  answered, exactly as for any other request; or
- calls `take_connection(scope)` and owns the socket from then on (nothing it sends through
  ASGI afterwards is written; a status sent then is for the server's metrics and audit only).

Either way the connection is closed when the app returns. Bytes the client sent after the
request head are already in the taken stream's reader. Every other request is served by
uvicorn unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from http import HTTPStatus
from typing import Any

from kube.httpstream.stream import SocketStream
from kube.serving import HeaderTimeoutProtocol

__all__ = ["UPGRADE", "UpgradeProtocol", "is_upgrade", "take_connection"]

logger = logging.getLogger(__name__)

UPGRADE = "picokube.dev/upgrade"
"""The ASGI scope extension an upgrade request carries."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


def is_upgrade(scope: Scope) -> bool:
    """Whether the request asked to upgrade and its connection can be taken."""
    return UPGRADE in (scope.get("extensions") or {})


def take_connection(scope: Scope) -> SocketStream:
    """The client's raw connection; after this, the caller answers (or relays) on it and nothing else does."""
    take: Callable[[], SocketStream] = scope["extensions"][UPGRADE]["take"]
    return take()


class _UpgradeCycle:
    """One upgrade request's ASGI receive/send, written straight to the detached connection."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self.taken = False
        self._body_sent = False
        self._head: bytes | None = None
        self._done = asyncio.Event()

    def take(self) -> SocketStream:
        self.taken = True
        return self.stream

    async def receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self._done.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.taken or self._done.is_set():
            return
        if message["type"] == "http.response.start":
            status = int(message["status"])
            lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}".encode()]
            lines += [name + b": " + value for name, value in message.get("headers", [])
                      if name.lower() not in (b"connection", b"transfer-encoding", b"keep-alive")]
            lines.append(b"Connection: close")
            self._head = b"\r\n".join(lines) + b"\r\n\r\n"
        elif message["type"] == "http.response.body":
            data = (self._head or b"") + message.get("body", b"")
            self._head = b""
            try:
                if data:
                    await self.stream.send(data)
            except (ConnectionError, OSError):
                self._done.set()
                return
            if not message.get("more_body", False):
                self._done.set()

    async def run(self, app: Callable[[Scope, Any, Any], Awaitable[None]], scope: Scope) -> None:
        try:
            await app(scope, self.receive, self.send)
        except Exception:  # a connection boundary: log it, close only this connection
            logger.exception("Upgrade request failed", extra={"path": scope.get("path")})
            if self._head is None and not self.taken:
                await self.send({"type": "http.response.start", "status": 500,
                                 "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
                await self.send({"type": "http.response.body", "body": b"Internal Server Error\n"})
        finally:
            self._done.set()
            await self.stream.aclose()


class UpgradeProtocol(HeaderTimeoutProtocol):
    """uvicorn's h11 protocol (with a header timeout, `kube.serving`); a request that asks to upgrade
    goes to the app with its connection."""

    def _should_upgrade(self) -> bool:
        return self._get_upgrade() is not None

    def handle_websocket_upgrade(self, event: Any) -> None:
        self.connections.discard(self)
        reader = asyncio.StreamReader()
        protocol = asyncio.StreamReaderProtocol(reader)
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        trailing, _ = self.conn.trailing_data
        if trailing:
            reader.feed_data(bytes(trailing))
        writer = asyncio.StreamWriter(self.transport, protocol, reader, self.loop)
        cycle = _UpgradeCycle(SocketStream(reader, writer))
        scope: Scope = dict(self.scope)
        scope["extensions"] = {**(scope.get("extensions") or {}), UPGRADE: {"take": cycle.take}}
        task = self.loop.create_task(cycle.run(self.app, scope))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
