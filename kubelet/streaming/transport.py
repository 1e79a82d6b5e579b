"""Byte pipes the streaming protocols run over: a TCP/TLS socket, or a WebSocket carrying bytes.

SPDY runs either straight on the upgraded socket (kubectl's `Upgrade: SPDY/3.1`) or tunnelled
in the binary messages of a WebSocket (`SPDY/3.1+portforward.k8s.io`, kubectl 1.31+
port-forward). `ByteStream` is what both look like to the SPDY session: `receive()` the next
bytes (b"" once the peer is done), `send()` bytes in order, `aclose()`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

__all__ = ["ByteStream", "SocketStream", "write_http_error"]

_READ_SIZE = 64 * 1024


class ByteStream(Protocol):
    async def receive(self) -> bytes:
        """The next bytes the peer sent; b"" once it closed its side (or the connection broke)."""
        ...

    async def send(self, data: bytes) -> None:
        """Write `data` after everything sent before; raise ConnectionError when the peer is gone."""
        ...

    async def aclose(self) -> None:
        """Close the connection; safe to call more than once."""
        ...


class SocketStream:
    """A `ByteStream` over an asyncio connection; `send` waits while the peer is slow (backpressure)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._closed = False

    async def receive(self) -> bytes:
        try:
            return await self.reader.read(_READ_SIZE)
        except (ConnectionError, OSError):
            return b""

    async def send(self, data: bytes) -> None:
        if self._closed or self.writer.is_closing():
            raise ConnectionResetError("the connection is closed")
        self.writer.write(data)
        await self.writer.drain()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self.writer.wait_closed(), 2)


async def write_http_error(stream: SocketStream, status: int, message: str,
                           headers: dict[str, list[str]] | None = None) -> None:
    """Answer a not-upgraded request as Go's http.Error does (text/plain), then close the socket."""
    from http import HTTPStatus

    body = (message + "\n").encode()
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: text/plain; charset=utf-8",
             "X-Content-Type-Options: nosniff", f"Content-Length: {len(body)}", "Connection: close"]
    for name, values in (headers or {}).items():
        lines += [f"{name}: {v}" for v in values]
    with contextlib.suppress(ConnectionError, OSError):
        await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await stream.aclose()
