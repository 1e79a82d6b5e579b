"""One side of a relayed connection: an asyncio stream pair with backpressure and half-close."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["SocketStream"]

_READ_SIZE = 64 * 1024


class SocketStream:
    """An asyncio connection; `send` waits while the peer is slow, so a relay never buffers a stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self._closed = False

    async def receive(self) -> bytes:
        """The next bytes the peer sent; b"" once it closed its side (or the connection broke)."""
        try:
            return await self.reader.read(_READ_SIZE)
        except (ConnectionError, OSError):
            return b""

    async def send(self, data: bytes) -> None:
        """Write `data` after everything sent before; ConnectionError when the peer is gone."""
        if self._closed or self.writer.is_closing():
            raise ConnectionResetError("the connection is closed")
        self.writer.write(data)
        await self.writer.drain()

    async def aclose(self) -> None:
        """Close the connection; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self.writer.wait_closed(), 2)
