"""Copying bytes both ways between two connections until one side is done.

Each direction reads one chunk and waits for it to be written before reading the next, so a
slow reader slows the writer down (TCP backpressure end to end) and no more than one chunk
per direction is ever held. As in apimachinery's UpgradeAwareHandler, the relay ends when
either direction ends (its source closed or broke), closing both connections: the protocols
relayed (WebSocket, SPDY) end their streams inside the connection, so a connection closed by
one side is over for both.
"""

from __future__ import annotations

import asyncio
import contextlib

from kube.httpstream.stream import SocketStream

__all__ = ["relay"]


async def _pump(source: SocketStream, sink: SocketStream, first: bytes) -> None:
    if first:
        await sink.send(first)
    while chunk := await source.receive():
        await sink.send(chunk)


async def relay(a: SocketStream, b: SocketStream, *, a_to_b_first: bytes = b"", b_to_a_first: bytes = b"") -> None:
    """Relay until either direction ends, then close both; `*_first` are bytes already read from a side."""
    tasks = [asyncio.ensure_future(_pump(a, b, a_to_b_first)), asyncio.ensure_future(_pump(b, a, b_to_a_first))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
                await t
        await asyncio.gather(a.aclose(), b.aclose())
