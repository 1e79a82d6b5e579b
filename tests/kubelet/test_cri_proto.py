"""The project's runtime.v1 proto matches the CRI that the installed containerd serves.

containerd embeds the gzipped FileDescriptorProto of its CRI api.proto; every service, RPC,
message, field and enum value of our minimal proto must exist there with the same name,
number, type and label, or the kubelet would speak a different wire protocol.
"""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from kubelet.cri.proto import runtime_v1_pb2

pytestmark = pytest.mark.skipif(shutil.which("containerd") is None, reason="containerd is not installed")


def containerd_descriptor() -> descriptor_pb2.FileDescriptorProto:
    path = shutil.which("containerd")
    assert path is not None
    data = Path(path).read_bytes()
    for match in re.finditer(rb"\x1f\x8b\x08\x00", data):
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[match.start():match.start() + 400_000])
            fd = descriptor_pb2.FileDescriptorProto()
            fd.ParseFromString(raw)
        except Exception:  # noqa: BLE001 - most gzip headers in a binary are not descriptors
            continue
        if fd.package == "runtime.v1":
            return fd
    raise AssertionError("containerd embeds no runtime.v1 descriptor")


def messages(fd: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    found: dict[str, descriptor_pb2.DescriptorProto] = {}

    def walk(m: descriptor_pb2.DescriptorProto, prefix: str) -> None:
        found[prefix + m.name] = m
        for nested in m.nested_type:
            walk(nested, f"{prefix}{m.name}.")
    for m in fd.message_type:
        walk(m, "")
    return found


def ours() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto()
    runtime_v1_pb2.DESCRIPTOR.CopyToProto(fd)
    return fd


def test_every_message_and_field_matches_containerd() -> None:
    theirs, mine = messages(containerd_descriptor()), messages(ours())
    assert len(mine) > 40
    for name, message in mine.items():
        assert name in theirs, f"message {name} is not in containerd's runtime.v1"
        fields = {f.name: f for f in theirs[name].field}
        for f in message.field:
            assert f.name in fields, f"{name}.{f.name} is not in containerd's runtime.v1"
            t = fields[f.name]
            assert (f.number, f.type, f.label, f.type_name) == (t.number, t.type, t.label, t.type_name), \
                f"{name}.{f.name} differs: ours {(f.number, f.type, f.label, f.type_name)}, " \
                f"containerd {(t.number, t.type, t.label, t.type_name)}"


def test_enums_and_services_match_containerd() -> None:
    theirs, mine = containerd_descriptor(), ours()
    their_enums = {e.name: {v.name: v.number for v in e.value} for e in theirs.enum_type}
    for e in mine.enum_type:
        assert {v.name: v.number for v in e.value}.items() <= their_enums[e.name].items(), e.name
    their_methods = {(s.name, m.name): (m.input_type, m.output_type) for s in theirs.service for m in s.method}
    for s in mine.service:
        for m in s.method:
            assert their_methods.get((s.name, m.name)) == (m.input_type, m.output_type), f"{s.name}.{m.name}"


def test_streaming_rpcs_are_in_the_proto_and_in_containerd() -> None:
    theirs = {(s.name, m.name) for s in containerd_descriptor().service for m in s.method}
    mine = {(s.name, m.name): (m.input_type, m.output_type) for s in ours().service for m in s.method}
    for rpc in ("Exec", "Attach", "PortForward"):
        assert mine[("RuntimeService", rpc)] == (f".runtime.v1.{rpc}Request", f".runtime.v1.{rpc}Response")
        assert ("RuntimeService", rpc) in theirs
    assert [f.name for f in messages(ours())["PortForwardRequest"].field] == ["pod_sandbox_id", "port"]
