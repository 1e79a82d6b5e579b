"""Relaying the bytes of an upgraded connection between two peers, both ways, until both are done.

What upstream's UpgradeAwareHandler does once the backend answered (two `io.Copy`s), with one
difference: a direction that ends does not tear the other down. When one peer is done
sending (EOF), the other is told with a half-close (`write_eof`) where its transport can
(plain TCP), and the opposite direction keeps flowing until it ends too. A transport that
cannot half-close (TLS) is closed instead, which ends the opposite direction as well: the
peer has no other way to learn that nothing more will come.

Guarantees: bytes arrive in order and unchanged; at most one chunk per direction is held
here (each write waits for `drain`, so a slow reader slows its writer: backpressure); a
broken connection ends its directions quietly (no exception). Closing the connections
afterwards is the caller's job. Self-contained (asyncio streams only).
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["relay"]

_CHUNK = 64 * 1024


async def relay(a_reader: asyncio.StreamReader, a_writer: asyncio.StreamWriter,
                b_reader: asyncio.StreamReader, b_writer: asyncio.StreamWriter) -> None:
    """Copy a->b and b->a concurrently; return once both directions have ended."""
    async with asyncio.TaskGroup() as tg:
        tg.create_task(_copy(a_reader, b_writer))
        tg.create_task(_copy(b_reader, a_writer))


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        _end(sink)


def _end(sink: asyncio.StreamWriter) -> None:
    """Tell `sink`'s peer that nothing more comes: half-close if the transport can, else close."""
    if sink.is_closing():
        return
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        if sink.can_write_eof():
            sink.write_eof()
            return
    sink.close()
