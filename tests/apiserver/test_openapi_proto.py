"""The project's openapi.v2 proto matches the gnostic model compiled into the installed kubectl.

kubectl decodes `/openapi/v2` with gnostic's `openapi.v2.Document`; every message, field and
oneof of our minimal proto must exist there with the same name, number, type, label and
message type, or kubectl would read a different document than the one the server sends.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from apiserver.openapi.proto import openapiv2_pb2
from kube.testing.go_descriptors import embedded_descriptor

SDK_BIN = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent
BINARIES = [b for b in ("kubectl.1.27", "kubectl.1.33") if (SDK_BIN / b).exists()]


def _messages(fd: descriptor_pb2.FileDescriptorProto) -> dict[str, descriptor_pb2.DescriptorProto]:
    return {m.name: m for m in fd.message_type}


@pytest.mark.skipif(not BINARIES, reason="kubectl is not installed")
@pytest.mark.parametrize("binary", BINARIES)
def test_every_message_and_field_matches_kubectl(binary: str) -> None:
    theirs_fd = embedded_descriptor((SDK_BIN / binary).read_bytes(), "openapiv2/OpenAPIv2.proto")
    ours_fd = descriptor_pb2.FileDescriptorProto()
    openapiv2_pb2.DESCRIPTOR.CopyToProto(ours_fd)
    assert ours_fd.package == theirs_fd.package == "openapi.v2"
    theirs, ours = _messages(theirs_fd), _messages(ours_fd)
    assert "Document" in ours and len(ours) > 30
    for name, message in ours.items():
        assert name in theirs, f"message {name} is not in kubectl's openapi.v2"
        fields = {f.name: f for f in theirs[name].field}
        their_oneofs = [o.name for o in theirs[name].oneof_decl]
        for f in message.field:
            assert f.name in fields, f"{name}.{f.name} is not in kubectl's openapi.v2"
            t = fields[f.name]
            assert (f.number, f.type, f.label, f.type_name) == (t.number, t.type, t.label, t.type_name), \
                f"{name}.{f.name} differs: ours {(f.number, f.type, f.label, f.type_name)}, " \
                f"kubectl {(t.number, t.type, t.label, t.type_name)}"
            assert f.HasField("oneof_index") == t.HasField("oneof_index"), f"{name}.{f.name} oneof membership"
            if f.HasField("oneof_index"):
                assert message.oneof_decl[f.oneof_index].name == their_oneofs[t.oneof_index]
