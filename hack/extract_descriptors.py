"""Extract the Kubernetes API's protobuf descriptors from a kubectl binary.

    python hack/extract_descriptors.py [PATH/TO/kubectl]

(default: `kubectl.1.33` beside the `kubectl` on PATH) writes
`apiserver/protobuf/descriptors.binpb`, a serialized `FileDescriptorSet` holding the
`generated.proto` files of the API groups whose definitions `apiserver/openapi/schemas.json`
holds (the served kinds, their subresources' kinds and the meta types), with every file they
import. kubectl carries these descriptors gzipped, exactly as upstream compiled them; they are
copied unchanged except that the import of gogo.proto (whose options only steer Go code
generation, and which kubectl does not embed) is dropped. The options themselves stay, as
unknown fields: the server reads gogo's `nullable=false` from them to tell value fields from
pointers. Deterministic output; tests/apiserver/test_protobuf_descriptors.py checks it against
the installed kubectl.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kube.testing.go_descriptors import gzipped_descriptors  # noqa: E402 - after the path setup above

OUT = ROOT / "apiserver" / "protobuf" / "descriptors.binpb"
SCHEMAS = ROOT / "apiserver" / "openapi" / "schemas.json"
GOGO = "github.com/gogo/protobuf/gogoproto/gogo.proto"


def proto_file(definition: str) -> str | None:
    """`io.k8s.api.apps.v1.Deployment` -> `k8s.io/api/apps/v1/generated.proto`."""
    if not definition.startswith("io.k8s.") or definition.startswith("io.k8s.apiextensions"):
        return None
    package = definition[len("io.k8s."):].rsplit(".", 1)[0]
    return "k8s.io/" + package.replace(".", "/") + "/generated.proto"


def default_binary() -> Path:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise SystemExit("no kubectl on PATH; pass the binary's path")
    return Path(kubectl).resolve().parent / "kubectl.1.33"


def extract(binary: Path) -> descriptor_pb2.FileDescriptorSet:
    embedded = {fd.name: fd for fd in gzipped_descriptors(binary.read_bytes(), "k8s.io/")}
    definitions = json.loads(SCHEMAS.read_text(encoding="utf-8"))["definitions"]
    todo = sorted({f for d in definitions if (f := proto_file(d)) and f in embedded})
    wanted: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        fd = descriptor_pb2.FileDescriptorProto()
        fd.CopyFrom(embedded[name])
        kept = [d for d in fd.dependency if d != GOGO]
        del fd.dependency[:]
        fd.dependency.extend(kept)
        wanted[name] = fd
        todo.extend(kept)
    out = descriptor_pb2.FileDescriptorSet()
    out.file.extend(wanted[name] for name in sorted(wanted))
    return out


def main() -> None:
    binary = Path(sys.argv[1]) if len(sys.argv) > 1 else default_binary()
    fds = extract(binary)
    OUT.write_bytes(fds.SerializeToString(deterministic=True))
    print(f"wrote {len(fds.file)} files to {OUT.relative_to(ROOT)}: {', '.join(f.name for f in fds.file)}")


if __name__ == "__main__":
    main()
