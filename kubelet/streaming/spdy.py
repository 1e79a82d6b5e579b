"""SPDY/3.1 framing: the frames kubectl 1.27-1.29 (exec, attach) and port-forward speak.

There is no maintained SPDY library for Python, so this is the minimal framing layer that
moby/spdystream (the Go package behind k8s.io/apimachinery's httpstream/spdy) implements,
written from the SPDY/3 draft:

- control frames `1|version(15)|type(16)|flags(8)|length(24)|data`: SYN_STREAM, SYN_REPLY,
  RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE;
- data frames `0|stream-id(31)|flags(8)|length(24)|data`, FIN (0x01) half-closes a stream;
- header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are `count(32)` then `len(32) name len(32)
  value` pairs, lower-case names, several values of one name joined by NUL, all compressed by
  one zlib stream per direction primed with SPDY/3's dictionary and flushed with Z_SYNC_FLUSH
  after each block, so each side's compression context spans every frame it sends.

`FrameEncoder` and `FrameDecoder` are sans-IO (bytes in, frames out) and each owns one
direction's zlib context: a connection has exactly one of each, used in frame order.
Invariants: `FrameDecoder.feed` returns frames only once they are complete; a malformed frame
raises `SpdyProtocolError` (the connection is then unusable, as in spdystream).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

__all__ = [
    "VERSION", "FLAG_FIN", "FLAG_UNIDIRECTIONAL", "SpdyProtocolError",
    "SynStream", "SynReply", "RstStream", "Settings", "Ping", "GoAway", "Headers", "WindowUpdate", "Data",
    "Frame", "FrameEncoder", "FrameDecoder", "HEADER_DICTIONARY",
    "RST_PROTOCOL_ERROR", "RST_INVALID_STREAM", "RST_REFUSED_STREAM", "RST_CANCEL", "RST_INTERNAL_ERROR",
]

VERSION = 3
FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02
MAX_DATA_LENGTH = (1 << 24) - 1

TYPE_SYN_STREAM, TYPE_SYN_REPLY, TYPE_RST_STREAM, TYPE_SETTINGS = 1, 2, 3, 4
TYPE_PING, TYPE_GOAWAY, TYPE_HEADERS, TYPE_WINDOW_UPDATE = 6, 7, 8, 9

RST_PROTOCOL_ERROR, RST_INVALID_STREAM, RST_REFUSED_STREAM = 1, 2, 3
RST_CANCEL, RST_INTERNAL_ERROR = 5, 6

_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges "
    "age allow authorization cache-control connection content-base content-encoding content-language "
    "content-length content-location content-md5 content-range content-type date etag expect expires from "
    "host if-match if-modified-since if-none-match if-range if-unmodified-since last-modified location "
    "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after server te trailer "
    "transfer-encoding upgrade user-agent vary via warning www-authenticate method get status 200_OK "
    "version HTTP/1.1 url public set-cookie keep-alive origin"
)
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)


def _dictionary() -> bytes:
    """SPDY/3's zlib dictionary: length-prefixed common header words, then a tail of common values."""
    words = [w.replace("_", " ") for w in _WORDS.split(" ")]  # "200_OK" is the one word with a space
    out = b"".join(struct.pack(">I", len(w)) + w.encode() for w in words)
    return out + _TAIL.encode()


HEADER_DICTIONARY = _dictionary()


class SpdyProtocolError(Exception):
    """The peer sent something that is not SPDY/3.1; the connection cannot continue."""


@dataclass(frozen=True)
class SynStream:
    stream_id: int
    headers: dict[str, list[str]]
    associated_to: int = 0
    priority: int = 0
    flags: int = 0


@dataclass(frozen=True)
class SynReply:
    stream_id: int
    headers: dict[str, list[str]] = field(default_factory=dict)
    flags: int = 0


@dataclass(frozen=True)
class RstStream:
    stream_id: int
    status: int


@dataclass(frozen=True)
class Settings:
    entries: tuple[tuple[int, int, int], ...] = ()
    """(flags, id, value) per setting."""
    flags: int = 0


@dataclass(frozen=True)
class Ping:
    ping_id: int


@dataclass(frozen=True)
class GoAway:
    last_good_stream_id: int
    status: int = 0


@dataclass(frozen=True)
class Headers:
    stream_id: int
    headers: dict[str, list[str]]
    flags: int = 0


@dataclass(frozen=True)
class WindowUpdate:
    stream_id: int
    delta: int


@dataclass(frozen=True)
class Data:
    stream_id: int
    data: bytes
    flags: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


Frame = SynStream | SynReply | RstStream | Settings | Ping | GoAway | Headers | WindowUpdate | Data


def _header_block(headers: dict[str, list[str]]) -> bytes:
    parts = [struct.pack(">I", len(headers))]
    for name, values in headers.items():
        n, v = name.lower().encode(), "\x00".join(values).encode()
        parts += [struct.pack(">I", len(n)), n, struct.pack(">I", len(v)), v]
    return b"".join(parts)


def _parse_header_block(block: bytes) -> dict[str, list[str]]:
    try:
        (count,), pos = struct.unpack_from(">I", block), 4
        headers: dict[str, list[str]] = {}
        for _ in range(count):
            (n,) = struct.unpack_from(">I", block, pos)
            name = block[pos + 4:pos + 4 + n].decode().lower()
            pos += 4 + n
            (n,) = struct.unpack_from(">I", block, pos)
            value = block[pos + 4:pos + 4 + n].decode()
            if pos + 4 + n > len(block):
                raise SpdyProtocolError("truncated header block")
            pos += 4 + n
            headers.setdefault(name, []).extend(value.split("\x00"))
    except (struct.error, UnicodeDecodeError) as e:
        raise SpdyProtocolError(f"malformed header block: {e}") from None
    return headers


def _control(frame_type: int, flags: int, payload: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, frame_type, (flags << 24) | len(payload)) + payload


class FrameEncoder:
    """Serializes frames; owns the sending side's header compression context (use in order)."""

    def __init__(self) -> None:
        self._zlib = zlib.compressobj(level=9, zdict=HEADER_DICTIONARY)

    def _compress(self, headers: dict[str, list[str]]) -> bytes:
        return self._zlib.compress(_header_block(headers)) + self._zlib.flush(zlib.Z_SYNC_FLUSH)

    def encode(self, frame: Frame) -> bytes:
        match frame:
            case Data(stream_id=sid, data=data, flags=flags):
                if len(data) > MAX_DATA_LENGTH:
                    raise ValueError("a DATA frame carries at most 16 MiB")
                return struct.pack(">II", sid & 0x7FFFFFFF, (flags << 24) | len(data)) + data
            case SynStream():
                body = struct.pack(">IIBB", frame.stream_id, frame.associated_to, (frame.priority & 7) << 5, 0)
                return _control(TYPE_SYN_STREAM, frame.flags, body + self._compress(frame.headers))
            case SynReply():
                return _control(TYPE_SYN_REPLY, frame.flags,
                                struct.pack(">I", frame.stream_id) + self._compress(frame.headers))
            case Headers():
                return _control(TYPE_HEADERS, frame.flags,
                                struct.pack(">I", frame.stream_id) + self._compress(frame.headers))
            case RstStream():
                return _control(TYPE_RST_STREAM, 0, struct.pack(">II", frame.stream_id, frame.status))
            case Settings():
                body = struct.pack(">I", len(frame.entries)) + b"".join(
                    struct.pack(">II", (f << 24) | i, v) for f, i, v in frame.entries)
                return _control(TYPE_SETTINGS, frame.flags, body)
            case Ping():
                return _control(TYPE_PING, 0, struct.pack(">I", frame.ping_id))
            case GoAway():
                return _control(TYPE_GOAWAY, 0, struct.pack(">II", frame.last_good_stream_id, frame.status))
            case WindowUpdate():
                return _control(TYPE_WINDOW_UPDATE, 0, struct.pack(">II", frame.stream_id, frame.delta))
        raise TypeError(f"not a SPDY frame: {frame!r}")


class FrameDecoder:
    """Parses bytes into frames as they arrive; owns the receiving side's decompression context."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._zlib = zlib.decompressobj(zdict=HEADER_DICTIONARY)

    def _decompress(self, data: bytes) -> dict[str, list[str]]:
        try:
            block = self._zlib.decompress(data)
        except zlib.error as e:
            raise SpdyProtocolError(f"header decompression failed: {e}") from None
        return _parse_header_block(block)

    def feed(self, data: bytes) -> list[Frame]:
        """Every frame completed by `data`, in order; raise SpdyProtocolError on a malformed one."""
        self._buf += data
        frames: list[Frame] = []
        while len(self._buf) >= 8:
            first, flags_len = struct.unpack_from(">II", self._buf)
            length = flags_len & 0xFFFFFF
            if len(self._buf) < 8 + length:
                break
            payload = bytes(self._buf[8:8 + length])
            del self._buf[:8 + length]
            flags = flags_len >> 24
            if first & 0x80000000:
                frame = self._control((first >> 16) & 0x7FFF, first & 0xFFFF, flags, payload)
                if frame is not None:
                    frames.append(frame)
            else:
                frames.append(Data(first & 0x7FFFFFFF, payload, flags))
        return frames

    def _control(self, version: int, frame_type: int, flags: int, p: bytes) -> Frame | None:
        if version != VERSION:
            raise SpdyProtocolError(f"unsupported SPDY version {version}")
        try:
            if frame_type == TYPE_SYN_STREAM:
                sid, assoc, prio, _slot = struct.unpack_from(">IIBB", p)
                return SynStream(sid & 0x7FFFFFFF, self._decompress(p[10:]), assoc & 0x7FFFFFFF, prio >> 5, flags)
            if frame_type in (TYPE_SYN_REPLY, TYPE_HEADERS):
                (sid,) = struct.unpack_from(">I", p)
                cls = SynReply if frame_type == TYPE_SYN_REPLY else Headers
                return cls(sid & 0x7FFFFFFF, self._decompress(p[4:]), flags)
            if frame_type == TYPE_RST_STREAM:
                sid, status = struct.unpack_from(">II", p)
                return RstStream(sid & 0x7FFFFFFF, status)
            if frame_type == TYPE_SETTINGS:
                (count,) = struct.unpack_from(">I", p)
                raw = [struct.unpack_from(">II", p, 4 + 8 * i) for i in range(count)]
                return Settings(tuple((fi >> 24, fi & 0xFFFFFF, v) for fi, v in raw), flags)
            if frame_type == TYPE_PING:
                return Ping(struct.unpack_from(">I", p)[0])
            if frame_type == TYPE_GOAWAY:
                last, status = struct.unpack_from(">II", p)
                return GoAway(last & 0x7FFFFFFF, status)
            if frame_type == TYPE_WINDOW_UPDATE:
                sid, delta = struct.unpack_from(">II", p)
                return WindowUpdate(sid & 0x7FFFFFFF, delta & 0x7FFFFFFF)
        except struct.error as e:
            raise SpdyProtocolError(f"truncated control frame of type {frame_type}: {e}") from None
        return None  # unknown control frames are ignored, as the draft asks
