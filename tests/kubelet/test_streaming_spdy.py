"""SPDY/3.1 framing: every frame type round-trips, header compression keeps one zlib context per
direction across frames, and the dictionary is SPDY/3's (byte for byte, by its digest)."""

from __future__ import annotations

import hashlib
import struct
import zlib

import pytest

from kubelet.streaming.spdy import (
    FLAG_FIN,
    HEADER_DICTIONARY,
    Data,
    Frame,
    FrameDecoder,
    FrameEncoder,
    GoAway,
    Headers,
    Ping,
    RstStream,
    Settings,
    SpdyProtocolError,
    SynReply,
    SynStream,
    WindowUpdate,
)

FRAMES: list[Frame] = [
    SynStream(1, {"streamtype": ["error"]}),
    SynStream(3, {"streamtype": ["data"], "port": ["8080"], "requestid": ["0"]}, priority=3, flags=FLAG_FIN),
    SynReply(1, {}),
    Headers(3, {"x": ["a", "b"]}),
    Data(3, b"hello", FLAG_FIN),
    Data(5, b""),
    RstStream(5, 5),
    Settings(((0, 4, 1000), (1, 7, 65536))),
    Ping(2),
    GoAway(7, 0),
    WindowUpdate(3, 65536),
]


def test_dictionary_is_spdy3s() -> None:
    # The SPDY/3 draft's dictionary (as moby/spdystream ships it): 1423 bytes.
    assert len(HEADER_DICTIONARY) == 1423
    assert hashlib.sha256(HEADER_DICTIONARY).hexdigest() == \
        "51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02"
    assert HEADER_DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: type(f).__name__)
def test_each_frame_round_trips(frame: Frame) -> None:
    assert FrameDecoder().feed(FrameEncoder().encode(frame)) == [frame]


def test_frames_arriving_a_byte_at_a_time_come_out_whole_and_in_order() -> None:
    encoder = FrameEncoder()
    wire = b"".join(encoder.encode(f) for f in FRAMES)
    decoder, out = FrameDecoder(), []
    for i in range(len(wire)):
        out += decoder.feed(wire[i:i + 1])
    assert out == FRAMES


def test_control_frame_layout_is_spdy3() -> None:
    # control bit, version 3, type; flags and 24-bit length; then the fields
    assert FrameEncoder().encode(Ping(9)) == bytes.fromhex("80030006 00000004 00000009")
    assert FrameEncoder().encode(RstStream(3, 5)) == bytes.fromhex("80030003 00000008 00000003 00000005")
    assert FrameEncoder().encode(Data(3, b"hi", FLAG_FIN)) == bytes.fromhex("00000003 01000002") + b"hi"


def test_header_block_is_zlib_with_the_dictionary_and_sync_flushed() -> None:
    wire = FrameEncoder().encode(SynStream(1, {"streamtype": ["stdout"]}))
    assert wire[:4] == bytes.fromhex("80030001")
    block = zlib.decompressobj(zdict=HEADER_DICTIONARY).decompress(wire[18:])
    assert block == struct.pack(">I", 1) + struct.pack(">I", 10) + b"streamtype" + struct.pack(">I", 6) + b"stdout"
    assert wire.endswith(b"\x00\x00\xff\xff")  # Z_SYNC_FLUSH: each frame decodable on arrival


def test_compression_context_spans_frames() -> None:
    encoder = FrameEncoder()
    first = encoder.encode(SynStream(1, {"streamtype": ["error"]}))
    second = encoder.encode(SynStream(3, {"streamtype": ["error"]}))
    assert len(second) < len(first)  # the second block refers back into the first
    with pytest.raises(SpdyProtocolError):
        FrameDecoder().feed(second)  # alone, it cannot be decompressed
    decoder = FrameDecoder()
    assert decoder.feed(first + second)[1] == SynStream(3, {"streamtype": ["error"]})


def test_garbage_and_other_versions_are_protocol_errors() -> None:
    with pytest.raises(SpdyProtocolError):
        FrameDecoder().feed(bytes.fromhex("80020006 00000004 00000001"))  # SPDY/2
    with pytest.raises(SpdyProtocolError):
        FrameDecoder().feed(bytes.fromhex("80030001 0000000e 00000001 00000000 0000") + b"nope")


def test_unknown_control_frames_are_skipped() -> None:
    wire = bytes.fromhex("8003000a 00000002 abcd") + FrameEncoder().encode(Ping(1))
    assert FrameDecoder().feed(wire) == [Ping(1)]
