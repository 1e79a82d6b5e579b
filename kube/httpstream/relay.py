"""Copying bytes both ways between two connections until both directions are done.

What apimachinery's UpgradeAwareHandler does once the backend answered (two copies), used by
the API server (client ↔ kubelet or pod) and by the kubelet (API server ↔ the runtime's
streaming server). A direction that ends does not cut the other short: the peer it was
writing to is told with a half-close (`write_eof`) where its transport can (plain TCP), and
the opposite direction keeps flowing until it ends too. A transport that cannot half-close
(TLS) is closed instead, which ends the opposite direction as well: its peer has no other
way to learn that nothing more will come. Both connections are closed on return.

Guarantees: bytes arrive in order and unchanged; each direction reads one chunk and waits
for it to be written before reading the next, so a slow reader slows its writer down (TCP
backpressure end to end) and no more than one chunk per direction is ever held; a broken
connection ends its direction quietly.
"""

from __future__ import annotations

import asyncio
import contextlib

from kube.httpstream.stream import SocketStream

__all__ = ["relay"]


async def _pump(source: SocketStream, sink: SocketStream, first: bytes) -> None:
    try:
        if first:
            await sink.send(first)
        while chunk := await source.receive():
            await sink.send(chunk)
    except (ConnectionError, OSError):
        pass
    finally:
        _end(sink)


def _end(sink: SocketStream) -> None:
    """Tell `sink`'s peer that nothing more comes: half-close if the transport can, else close."""
    writer = sink.writer
    if writer.is_closing():
        return
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        if writer.can_write_eof():
            writer.write_eof()
            return
    writer.close()


async def relay(a: SocketStream, b: SocketStream, *, a_to_b_first: bytes = b"", b_to_a_first: bytes = b"") -> None:
    """Relay until both directions end, then close both; `*_first` are bytes already read from a side."""
    try:
        await asyncio.gather(_pump(a, b, a_to_b_first), _pump(b, a, b_to_a_first))
    finally:
        await asyncio.gather(a.aclose(), b.aclose())
