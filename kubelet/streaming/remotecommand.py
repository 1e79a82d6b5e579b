"""exec and attach over WebSocket channels or SPDY streams (the remotecommand protocols).

Mirrors the kubelet's cri/streaming/remotecommand (httpstream.go, websocket.go) plus the
`v5.channel.k8s.io` close signal that upstream's API server adds in front of it:

- Options from the query (`NewOptions`): `stdin`, `stdout`, `stderr`, `tty` are "1" to ask
  for them; `tty` drops stderr; asking for none is a 400 (`you must specify at least 1 of
  stdin, stdout, stderr`).
- WebSocket: subprotocols `v5.channel.k8s.io`, `v4.channel.k8s.io`, `v4.base64.channel.k8s.io`,
  `channel.k8s.io`, `base64.channel.k8s.io` (and none). Each message is one channel byte
  (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; in base64 protocols the ASCII digit, the
  payload base64) then data. An empty message on the lowest writable channel tells the client
  the streams are ready. With v5, the message `[255, ch]` closes channel `ch` (stdin EOF).
- SPDY: `X-Stream-Protocol-Version` negotiates `v4.channel.k8s.io` .. `channel.k8s.io`; the
  client opens one stream per `streamtype` (error, stdin, stdout, stderr, resize) and the
  session starts once all expected streams are there.
- The end: v4 and v5 write a metav1.Status on the error channel (`Success`, or `Failure` with
  reason `NonZeroExitCode` and a cause `ExitCode` holding the code); older protocols write
  only a failure's message. Then every stream is closed and the connection ends.
- Resize messages are JSON `{"Width": w, "Height": h}`, one after another.
If the client goes away, the process is cancelled.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelet.streaming.process_io import ProcessIO, TerminalSize
from kubelet.streaming.spdy_session import SpdyConnection, SpdyStream
from kubelet.streaming.transport import SocketStream, write_http_error
from kubelet.streaming.websocket import WebSocket, accept_websocket

__all__ = [
    "StreamOptions", "ExecError", "Runner", "options_from_query", "exit_status",
    "serve_remotecommand_websocket", "serve_remotecommand_spdy", "negotiate_spdy_protocol", "spdy_upgrade_response",
    "V5", "V4", "V4_BASE64", "V3", "V2", "V1", "V1_BASE64", "WEBSOCKET_PROTOCOLS", "SPDY_PROTOCOLS",
]

logger = logging.getLogger(__name__)

V5, V4, V4_BASE64 = "v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io"
V3, V2, V1, V1_BASE64 = "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io", "base64.channel.k8s.io"
WEBSOCKET_PROTOCOLS = (V5, V4, V4_BASE64, V1, V1_BASE64, "")
SPDY_PROTOCOLS = (V4, V3, V2, V1)
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
STREAM_CREATION_TIMEOUT = 30.0
_STREAM_IDS = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR, "resize": RESIZE}


class ExecError(Exception):
    """The command could not be run at all (not a non-zero exit): an InternalError status."""


Runner = Callable[[ProcessIO], Awaitable[int]]
"""Runs the process against its streams and returns its exit code; ExecError when it cannot run."""


@dataclass(frozen=True)
class StreamOptions:
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool


def options_from_query(query: Mapping[str, Sequence[str]]) -> StreamOptions:
    """Upstream's NewOptions; ValueError with its message when no stream is requested."""
    def flag(name: str) -> bool:
        return (query.get(name) or [""])[-1] == "1"
    tty = flag("tty")
    opts = StreamOptions(stdin=flag("input"), stdout=flag("output"), stderr=flag("error") and not tty, tty=tty)
    if not (opts.stdin or opts.stdout or opts.stderr):
        raise ValueError("you must specify at least 1 of stdin, stdout, stderr")
    return opts


def exit_status(code: int | None, *, command: Sequence[str] = (), error: str | None = None) -> dict[str, Any]:
    """The metav1.Status the error channel carries for this outcome."""
    if error is not None:
        return {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {error}",
                "reason": "InternalError", "details": {"causes": [{"message": error}]}, "code": 500}
    if not code:
        return {"metadata": {}, "status": "Success"}
    what = f"command '{' '.join(command)}' exited with {code}" if command else f"exited with {code}"
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {what}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def _parse_resizes(buffer: bytearray) -> list[TerminalSize]:
    """Whole JSON objects at the front of `buffer` (removed from it) as terminal sizes."""
    sizes, decoder = [], json.JSONDecoder()
    text = buffer.decode(errors="replace")
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        pos = end
        if isinstance(obj, dict):
            sizes.append(TerminalSize(int(obj.get("Width") or 0), int(obj.get("Height") or 0)))
    del buffer[:len(text[:pos].encode())]
    return sizes


async def _run_process(run: Runner, io: ProcessIO, client_gone: asyncio.Event,
                       command: Sequence[str]) -> dict[str, Any] | None:
    """Run until the process ends (its status) or the client leaves (None, the process cancelled)."""
    task = asyncio.ensure_future(run(io))
    gone = asyncio.ensure_future(client_gone.wait())
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return None
    try:
        return exit_status(task.result(), command=command)
    except ExecError as e:
        return exit_status(None, error=str(e))


# --- WebSocket --------------------------------------------------------------------------------
class _Channels:
    """Writes one channel's data as the negotiated protocol frames it."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.base64 = "base64" in ws.subprotocol

    async def write(self, channel: int, data: bytes) -> None:
        if self.base64:
            await self.ws.send_text(chr(ord("0") + channel) + base64.b64encode(data).decode())
        else:
            await self.ws.send(bytes([channel]) + data)

    def decode(self, message: bytes) -> tuple[int, bytes]:
        if self.base64:
            return message[0] - ord("0"), base64.b64decode(message[1:])
        return message[0], message[1:]


async def serve_remotecommand_websocket(head: bytes, stream: SocketStream, opts: StreamOptions, run: Runner,
                                        command: Sequence[str] = ()) -> None:
    """Serve one exec/attach over the WebSocket in `head`'s upgrade request, to the end."""
    ws = await accept_websocket(head, stream, WEBSOCKET_PROTOCOLS)
    if ws is None:
        return
    channels = _Channels(ws)
    gone = asyncio.Event()
    io = ProcessIO(stdin=asyncio.Queue() if opts.stdin else None, tty=opts.tty)

    async def writer(channel: int, wanted: bool) -> Callable[[bytes], Awaitable[None]]:
        async def write(data: bytes) -> None:
            if wanted and data and not gone.is_set():
                with contextlib.suppress(ConnectionError, OSError):
                    await channels.write(channel, data)
        return write

    io.stdout = await writer(STDOUT, opts.stdout)
    io.stderr = await writer(STDERR, opts.stderr)
    await channels.write(STDOUT if opts.stdout else STDERR if opts.stderr else ERROR, b"")
    reader = asyncio.ensure_future(_read_channels(ws, channels, io, gone))
    try:
        status = await _run_process(run, io, gone, command)
        if status is not None:
            with contextlib.suppress(ConnectionError, OSError):
                if ws.subprotocol in (V5, V4, V4_BASE64):
                    await channels.write(ERROR, json.dumps(status, separators=(",", ":")).encode())
                elif status["status"] != "Success":
                    await channels.write(ERROR, str(status["message"]).encode())
    finally:
        reader.cancel()
        await ws.close()


async def _read_channels(ws: WebSocket, channels: _Channels, io: ProcessIO, gone: asyncio.Event) -> None:
    resize_buf = bytearray()
    try:
        while (message := await ws.receive()) is not None:
            if not message:
                continue
            try:
                channel, data = channels.decode(message)
            except ValueError:
                continue
            if channel == STDIN and io.stdin is not None and data:
                io.stdin.put_nowait(data)
            elif channel == RESIZE:
                resize_buf += data
                for size in _parse_resizes(resize_buf):
                    io.resizes.put_nowait(size)
            elif channel == CLOSE and ws.subprotocol == V5 and data[:1] == bytes([STDIN]) and io.stdin is not None:
                io.stdin.put_nowait(b"")
    finally:
        gone.set()
        if io.stdin is not None:
            io.stdin.put_nowait(b"")


# --- SPDY -------------------------------------------------------------------------------------
def negotiate_spdy_protocol(offered: Sequence[str], supported: Sequence[str]) -> str | None:
    """httpstream.Handshake: the first offered version the server supports; "" when none was offered."""
    if not offered:
        return ""
    return next((p for p in offered if p in supported), None)


def spdy_upgrade_response(protocol: str) -> bytes:
    lines = ["HTTP/1.1 101 Switching Protocols", "Connection: Upgrade", "Upgrade: SPDY/3.1"]
    if protocol:
        lines.append(f"X-Stream-Protocol-Version: {protocol}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def check_spdy_upgrade(headers: Mapping[str, Sequence[str]], stream: SocketStream,
                             supported: Sequence[str]) -> str | None:
    """Validate the upgrade and negotiate the version; None after answering the error as upstream does."""
    connection = ",".join(headers.get("connection", [])).lower()
    upgrade = ",".join(headers.get("upgrade", [])).lower()
    if "upgrade" not in connection or "spdy/3.1" not in upgrade:
        await write_http_error(stream, 400, "unable to upgrade: missing upgrade headers in request")
        return None
    offered = [p.strip() for v in headers.get("x-stream-protocol-version", []) for p in v.split(",") if p.strip()]
    protocol = negotiate_spdy_protocol(offered, supported)
    if protocol is None:
        await write_http_error(stream, 403, f"unable to upgrade: unable to negotiate protocol: client supports "
                               f"{offered}, server accepts {list(supported)}",
                               {"X-Accepted-Stream-Protocol-Versions": list(supported)})
    return protocol


async def serve_remotecommand_spdy(headers: Mapping[str, Sequence[str]], stream: SocketStream, opts: StreamOptions,
                                   run: Runner, command: Sequence[str] = ()) -> None:
    """Serve one exec/attach over a SPDY/3.1 upgrade, to the end."""
    protocol = await check_spdy_upgrade(headers, stream, SPDY_PROTOCOLS)
    if protocol is None:
        return
    await stream.send(spdy_upgrade_response(protocol))
    conn = SpdyConnection(stream)
    reader = asyncio.ensure_future(conn.run())
    try:
        streams = await asyncio.wait_for(_wait_for_streams(conn, opts, protocol), STREAM_CREATION_TIMEOUT)
    except (TimeoutError, ConnectionError):
        logger.info("Timed out waiting for the client to create streams")
        reader.cancel()
        await conn.close()
        return
    if streams is None:
        reader.cancel()
        await conn.close()
        return
    await _run_spdy_session(conn, streams, opts, run, protocol, command)
    reader.cancel()


async def _wait_for_streams(conn: SpdyConnection, opts: StreamOptions, protocol: str) -> dict[int, SpdyStream] | None:
    expected = 1 + opts.stdin + opts.stdout + opts.stderr + (opts.tty and protocol in (V4, V3))
    streams: dict[int, SpdyStream] = {}
    while len(streams) < expected:
        s = await conn.accept()
        if s is None:
            return None
        kind = _STREAM_IDS.get(s.header("streamtype"))
        if kind is None:
            logger.info("Unexpected stream type", extra={"streamType": s.header("streamtype")})
            continue
        streams[kind] = s
    return streams


async def _run_spdy_session(conn: SpdyConnection, streams: dict[int, SpdyStream], opts: StreamOptions, run: Runner,
                            protocol: str, command: Sequence[str]) -> None:
    io = ProcessIO(stdin=asyncio.Queue() if STDIN in streams else None, tty=opts.tty)

    def writer(kind: int) -> Callable[[bytes], Awaitable[None]]:
        async def write(data: bytes) -> None:
            s = streams.get(kind)
            if s is not None and data and not conn.closed.is_set():
                with contextlib.suppress(ConnectionError, OSError):
                    await s.write(data)
        return write

    io.stdout, io.stderr = writer(STDOUT), writer(STDERR)
    pumps = [asyncio.ensure_future(_pump_stdin(streams[STDIN], io))] if STDIN in streams else []
    if RESIZE in streams:
        pumps.append(asyncio.ensure_future(_pump_resizes(streams[RESIZE], io)))
    gone = asyncio.Event()
    watcher = asyncio.ensure_future(_set_when(conn.closed, gone))
    try:
        status = await _run_process(run, io, gone, command)
        if status is not None:
            err = streams[ERROR]
            with contextlib.suppress(ConnectionError, OSError):
                if protocol == V4:
                    await err.write(json.dumps(status, separators=(",", ":")).encode())
                elif status["status"] != "Success":
                    await err.write(str(status["message"]).encode())
            for kind in (STDOUT, STDERR, ERROR):
                if kind in streams:
                    await streams[kind].close()
    finally:
        for task in (*pumps, watcher):
            task.cancel()
        await conn.close()


async def _set_when(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()


async def _pump_stdin(stream: SpdyStream, io: ProcessIO) -> None:
    assert io.stdin is not None
    while data := await stream.read():
        io.stdin.put_nowait(data)
    io.stdin.put_nowait(b"")


async def _pump_resizes(stream: SpdyStream, io: ProcessIO) -> None:
    buf = bytearray()
    while data := await stream.read():
        buf += data
        for size in _parse_resizes(buf):
            io.resizes.put_nowait(size)
