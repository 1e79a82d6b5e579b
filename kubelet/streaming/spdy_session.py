"""A SPDY/3.1 server connection: the streams a client opens, each read and written as bytes.

Mirrors what k8s.io/apimachinery's httpstream/spdy server side (over moby/spdystream) does for
the kubelet's exec, attach and port-forward:
- every SYN_STREAM from the client is answered with an empty SYN_REPLY and handed to
  `accept()` as a `SpdyStream` with its headers (`streamtype`, `port`, `requestid`);
- DATA frames are queued on their stream (a stream's reader sees b"" after FIN or RST);
  there is no flow control, as in spdystream: WINDOW_UPDATE and SETTINGS are read and ignored;
- PING is echoed; GOAWAY or the end of the byte stream ends the connection;
- `SpdyStream.close()` half-closes (an empty DATA frame with FIN), `reset()` sends RST_STREAM;
  `SpdyConnection.close()` sends GOAWAY and closes the transport.
One task (`run()`) reads; any task may write: frames are encoded and sent under one lock,
because the header compression context must see frames in the order they are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kubelet.streaming.spdy import (
    FLAG_FIN,
    RST_CANCEL,
    Data,
    Frame,
    FrameDecoder,
    FrameEncoder,
    GoAway,
    Ping,
    RstStream,
    SpdyProtocolError,
    SynReply,
    SynStream,
)
from kubelet.streaming.transport import ByteStream

__all__ = ["SpdyConnection", "SpdyStream"]

logger = logging.getLogger(__name__)

_MAX_FRAME = 32 * 1024


class SpdyStream:
    """One client-opened stream: `read()` its bytes, `write()` ours, `close()` our side."""

    def __init__(self, conn: SpdyConnection, stream_id: int, headers: dict[str, list[str]]) -> None:
        self.conn, self.stream_id, self.headers = conn, stream_id, headers
        self._incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.remote_closed = False
        self.local_closed = False

    def header(self, name: str) -> str:
        values = self.headers.get(name.lower()) or [""]
        return values[0]

    async def read(self) -> bytes:
        """The next bytes from the client; b"" once it half-closed or reset the stream."""
        if self.remote_closed and self._incoming.empty():
            return b""
        return await self._incoming.get()

    def _deliver(self, data: bytes, fin: bool) -> None:
        if self.remote_closed:
            return
        if data:
            self._incoming.put_nowait(data)
        if fin:
            self.remote_closed = True
            self._incoming.put_nowait(b"")

    async def write(self, data: bytes) -> None:
        """Send `data` as DATA frames; ConnectionError when this side or the connection is closed."""
        if self.local_closed:
            raise ConnectionResetError(f"stream {self.stream_id} is closed")
        for i in range(0, len(data), _MAX_FRAME):
            await self.conn.send_frame(Data(self.stream_id, data[i:i + _MAX_FRAME]))

    async def close(self) -> None:
        """Half-close: an empty DATA frame with FIN (the client's reader sees EOF)."""
        if self.local_closed:
            return
        self.local_closed = True
        with contextlib.suppress(ConnectionError, OSError):
            await self.conn.send_frame(Data(self.stream_id, b"", FLAG_FIN))

    async def reset(self, status: int = RST_CANCEL) -> None:
        self.local_closed = True
        self._deliver(b"", True)
        with contextlib.suppress(ConnectionError, OSError):
            await self.conn.send_frame(RstStream(self.stream_id, status))


class SpdyConnection:
    """The server end of one SPDY connection over `transport`."""

    def __init__(self, transport: ByteStream) -> None:
        self.transport = transport
        self._encoder, self._decoder = FrameEncoder(), FrameDecoder()
        self._send_lock = asyncio.Lock()
        self._streams: dict[int, SpdyStream] = {}
        self._new: asyncio.Queue[SpdyStream | None] = asyncio.Queue()
        self._last_stream_id = 0
        self.closed = asyncio.Event()

    async def send_frame(self, frame: Frame) -> None:
        async with self._send_lock:
            if self.closed.is_set():
                raise ConnectionResetError("the SPDY connection is closed")
            await self.transport.send(self._encoder.encode(frame))

    async def accept(self) -> SpdyStream | None:
        """The next stream the client opened (already replied to); None once the connection ended."""
        if self.closed.is_set() and self._new.empty():
            return None
        return await self._new.get()

    async def run(self) -> None:
        """Read frames until the client goes away; then every stream reads EOF and `accept()` None."""
        try:
            while True:
                data = await self.transport.receive()
                if not data:
                    return
                for frame in self._decoder.feed(data):
                    if not await self._handle(frame):
                        return
        except SpdyProtocolError as e:
            logger.info("SPDY protocol error, closing the connection", extra={"error": str(e)})
        finally:
            self.closed.set()
            for stream in self._streams.values():
                stream._deliver(b"", True)
            self._new.put_nowait(None)

    async def _handle(self, frame: Frame) -> bool:
        match frame:
            case Data(stream_id=sid):
                stream = self._streams.get(sid)
                if stream is not None:
                    stream._deliver(frame.data, frame.fin)
            case SynStream(stream_id=sid):
                self._last_stream_id = max(self._last_stream_id, sid)
                stream = SpdyStream(self, sid, frame.headers)
                self._streams[sid] = stream
                await self.send_frame(SynReply(sid, {}))
                if frame.flags & FLAG_FIN:
                    stream._deliver(b"", True)
                self._new.put_nowait(stream)
            case RstStream(stream_id=sid):
                stream = self._streams.get(sid)
                if stream is not None:
                    stream.local_closed = True
                    stream._deliver(b"", True)
            case Ping(ping_id=pid):
                await self.send_frame(Ping(pid))
            case GoAway():
                return False
        return True

    def remove(self, stream: SpdyStream) -> None:
        """Forget a finished stream (port-forward opens a pair per forwarded connection)."""
        self._streams.pop(stream.stream_id, None)

    async def close(self) -> None:
        """GOAWAY, then close the transport; safe to call more than once."""
        with contextlib.suppress(ConnectionError, OSError):
            await self.send_frame(GoAway(self._last_stream_id))
        self.closed.set()
        await self.transport.aclose()
