"""The protobuf file descriptors compiled into a Go binary (kubectl, containerd).

Go programs carry the `FileDescriptorProto` of every .proto they were built from: code from
protoc-gen-go embeds it serialized as is (its first field is the file name), gogo-generated
code (k8s.io/api, k8s.io/apimachinery) registers it gzipped. Reading them from the installed
binary is how picokube checks that its own .proto files and descriptor sets speak the same
wire format as the real clients, message for message and field number for field number.
Pure functions over the binary's bytes.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator

from google.protobuf import descriptor_pb2
from google.protobuf.internal import decoder

__all__ = ["embedded_descriptor", "gzipped_descriptors"]

_FILE_DESCRIPTOR_FIELDS = range(1, 15)  # FileDescriptorProto's field numbers (name .. edition)


def _message_end(data: bytes, start: int) -> int:
    """Where a serialized FileDescriptorProto starting at `start` ends: at the first byte that
    cannot begin one of its fields (the binary's next bytes are unrelated)."""
    pos = start
    while pos < len(data):
        tag, after = decoder._DecodeVarint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if number not in _FILE_DESCRIPTOR_FIELDS or wire_type not in (0, 2):
            break
        if wire_type == 0:
            _, after = decoder._DecodeVarint(data, after)
        else:
            length, after = decoder._DecodeVarint(data, after)
            after += length
        if after > len(data):
            break
        pos = after
    return pos


def embedded_descriptor(data: bytes, name: str) -> descriptor_pb2.FileDescriptorProto:
    """The descriptor of the .proto file `name` as protoc-gen-go embeds it; KeyError if absent."""
    encoded = name.encode()
    marker = b"\n" + bytes([len(encoded)]) + encoded
    for match in re.finditer(re.escape(marker), data):
        fd = descriptor_pb2.FileDescriptorProto()
        try:
            fd.ParseFromString(data[match.start():_message_end(data, match.start())])
        except Exception:  # noqa: BLE001 - the name may also occur in unrelated bytes
            continue
        if fd.name == name and fd.message_type:
            return fd
    raise KeyError(name)


def gzipped_descriptors(data: bytes, name_prefix: str = "") -> Iterator[descriptor_pb2.FileDescriptorProto]:
    """Every gzipped descriptor in `data` whose file name starts with `name_prefix`."""
    for match in re.finditer(rb"\x1f\x8b\x08\x00", data):
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[match.start():match.start() + 1_000_000])
            fd = descriptor_pb2.FileDescriptorProto()
            fd.ParseFromString(raw)
        except Exception:  # noqa: BLE001 - most gzip headers in a binary are not descriptors
            continue
        if fd.name.endswith(".proto") and fd.name.startswith(name_prefix):
            yield fd
