"""A small SPDY/3.1 client for tests: what client-go's spdy round tripper does, on our framing.

`SpdyClient.connect` sends the upgrade request (with `X-Stream-Protocol-Version` values) over
TLS and reads the response head; after a 101 the caller opens streams with headers and reads
each stream's bytes until its FIN. Client stream ids are odd, as in SPDY.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Sequence

from kubelet.streaming.spdy import (
    FLAG_FIN,
    Data,
    FrameDecoder,
    FrameEncoder,
    GoAway,
    Ping,
    RstStream,
    SynReply,
    SynStream,
)

__all__ = ["SpdyClient"]


class SpdyClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int,
                 head: dict[str, str], body: bytes) -> None:
        self.reader, self.writer, self.status, self.head, self.body = reader, writer, status, head, body
        self.encoder, self.decoder = FrameEncoder(), FrameDecoder()
        self.next_id = 1
        self.data: dict[int, bytearray] = {}
        self.fin: dict[int, asyncio.Event] = {}
        self.replied: dict[int, asyncio.Event] = {}
        self.pings: list[int] = []
        self.goaway = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, port: int, path: str, ctx: ssl.SSLContext, *, protocols: Sequence[str],
                      upgrade: bool = True) -> SpdyClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
        lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Length: 0"]
        if upgrade:
            lines += ["Connection: Upgrade", "Upgrade: SPDY/3.1"]
        lines += [f"X-Stream-Protocol-Version: {p}" for p in protocols]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        raw = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = raw.decode().split("\r\n")
        head: dict[str, str] = {}
        for k, _, v in (h.partition(":") for h in header_lines if h):
            key = k.strip().lower()
            head[key] = f"{head[key]}, {v.strip()}" if key in head else v.strip()
        body = b""
        if "content-length" in head:
            body = await reader.readexactly(int(head["content-length"]))
        client = cls(reader, writer, int(status_line.split()[1]), head, body)
        if client.status == 101:
            client._task = asyncio.ensure_future(client._read())
        return client

    async def _read(self) -> None:
        while data := await self.reader.read(65536):
            for frame in self.decoder.feed(data):
                if isinstance(frame, Data):
                    self.data.setdefault(frame.stream_id, bytearray()).extend(frame.data)
                    if frame.fin:
                        self.fin.setdefault(frame.stream_id, asyncio.Event()).set()
                elif isinstance(frame, SynReply):
                    self.replied.setdefault(frame.stream_id, asyncio.Event()).set()
                elif isinstance(frame, RstStream):
                    self.fin.setdefault(frame.stream_id, asyncio.Event()).set()
                elif isinstance(frame, Ping):
                    self.pings.append(frame.ping_id)
                elif isinstance(frame, GoAway):
                    self.goaway.set()
        self.goaway.set()
        for event in self.fin.values():
            event.set()

    async def send(self, frame: SynStream | Data | Ping) -> None:
        self.writer.write(self.encoder.encode(frame))
        await self.writer.drain()

    async def open(self, headers: dict[str, str], *, wait_reply: bool = True) -> int:
        sid, self.next_id = self.next_id, self.next_id + 2
        self.fin.setdefault(sid, asyncio.Event())
        replied = self.replied.setdefault(sid, asyncio.Event())
        await self.send(SynStream(sid, {k: [v] for k, v in headers.items()}))
        if wait_reply:
            await asyncio.wait_for(replied.wait(), 5)
        return sid

    async def write(self, sid: int, data: bytes, *, fin: bool = False) -> None:
        await self.send(Data(sid, data, FLAG_FIN if fin else 0))

    async def read_all(self, sid: int, timeout: float = 10) -> bytes:
        """Everything the server sent on `sid` once it half-closed it."""
        await asyncio.wait_for(self.fin.setdefault(sid, asyncio.Event()).wait(), timeout)
        return bytes(self.data.get(sid, b""))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError, ssl.SSLError):
            await self.writer.wait_closed()
