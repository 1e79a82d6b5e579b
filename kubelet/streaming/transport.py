"""Byte pipes the streaming protocols run over: a TCP/TLS socket, or a WebSocket carrying bytes.

SPDY runs either straight on the upgraded socket (kubectl's `Upgrade: SPDY/3.1`) or tunnelled
in the binary messages of a WebSocket (`SPDY/3.1+portforward.k8s.io`, kubectl 1.31+
port-forward). `ByteStream` is what both look like to the SPDY session: `receive()` the next
bytes (b"" once the peer is done), `send()` bytes in order, `aclose()`. `SocketStream` is the
shared one of `kube.httpstream` (the API server relays over the same class).
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from kube.httpstream.stream import SocketStream

__all__ = ["ByteStream", "SocketStream", "write_http_error"]


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
