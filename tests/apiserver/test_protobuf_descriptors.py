"""The committed Kubernetes descriptor set is what kubectl compiles in.

`apiserver/protobuf/descriptors.binpb` must hold upstream's `generated.proto` descriptors
unchanged (bar the gogo.proto import), or the server would read other fields than the
client wrote; field numbers must also agree with older kubectls, which send the same
messages.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from kube.testing.go_descriptors import gzipped_descriptors

SDK_BIN = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent
SET = Path(__file__).resolve().parents[2] / "apiserver" / "protobuf" / "descriptors.binpb"
GOGO = "github.com/gogo/protobuf/gogoproto/gogo.proto"

pytestmark = pytest.mark.skipif(not (SDK_BIN / "kubectl.1.33").exists(), reason="kubectl 1.33 is not installed")


def committed() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    return {f.name: f for f in descriptor_pb2.FileDescriptorSet.FromString(SET.read_bytes()).file}


def embedded(binary: str) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    return {fd.name: fd for fd in gzipped_descriptors((SDK_BIN / binary).read_bytes(), "k8s.io/")}


def test_the_committed_set_is_kubectls_own() -> None:
    ours, theirs = committed(), embedded("kubectl.1.33")
    assert "k8s.io/api/core/v1/generated.proto" in ours and "k8s.io/apimachinery/pkg/runtime/generated.proto" in ours
    for name, fd in ours.items():
        upstream = descriptor_pb2.FileDescriptorProto()
        upstream.CopyFrom(theirs[name])
        kept = [d for d in upstream.dependency if d != GOGO]
        del upstream.dependency[:]
        upstream.dependency.extend(kept)
        assert fd == upstream, f"{name} differs from kubectl 1.33's"


def _fields(fd: descriptor_pb2.FileDescriptorProto) -> dict[tuple[str, str], tuple[int, int, str]]:
    return {(m.name, f.name): (f.number, f.type, f.type_name) for m in fd.message_type for f in m.field}


@pytest.mark.parametrize("binary", [b for b in ("kubectl.1.27", "kubectl.1.32") if (SDK_BIN / b).exists()])
def test_field_numbers_agree_with_older_kubectls(binary: str) -> None:
    older = embedded(binary)
    for name, fd in committed().items():
        if name not in older:
            continue
        ours, theirs = _fields(fd), _fields(older[name])
        shared = ours.keys() & theirs.keys()
        assert len(shared) >= 0.8 * len(theirs), name
        assert {k: ours[k] for k in shared} == {k: theirs[k] for k in shared}, name
