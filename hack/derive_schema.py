"""Derive the schemas picokube serves from the Kubernetes API's own OpenAPI v2 document.

    python hack/derive_schema.py PATH/TO/kubernetes-openapi-v2.json

writes `apiserver/openapi/schemas.json`: the definitions reachable from the kinds we serve
(plus the meta types clients send), keeping only the structural facts — types, formats,
properties, required fields, references, enums, and the `x-kubernetes-*` extensions for
patch merge keys, list types and group-version-kinds. Descriptions are dropped. Run it
again when the served kinds change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOTS = [
    "io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.Node", "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.Event", "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Secret",
    "io.k8s.api.core.v1.ServiceAccount", "io.k8s.api.core.v1.Binding", "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.coordination.v1.Lease", "io.k8s.api.autoscaling.v1.Scale",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.api.authentication.v1.TokenRequest", "io.k8s.api.rbac.v1.Role", "io.k8s.api.rbac.v1.ClusterRole",
    "io.k8s.api.rbac.v1.RoleBinding", "io.k8s.api.rbac.v1.ClusterRoleBinding",
    "io.k8s.api.authorization.v1.SelfSubjectAccessReview", "io.k8s.api.authorization.v1.SubjectAccessReview",
    "io.k8s.api.scheduling.v1.PriorityClass", "io.k8s.api.core.v1.LimitRange", "io.k8s.api.core.v1.ResourceQuota",
    "io.k8s.api.policy.v1.Eviction",
]
KEEP = {"type", "format", "properties", "items", "$ref", "required", "additionalProperties", "enum",
        "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy", "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-group-version-kind",
        "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-unions"}


def strip(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "properties":
                out[k] = {name: strip(prop) for name, prop in v.items()}
            elif k.startswith("x-kubernetes-") and k in KEEP:
                out[k] = v
            elif k in KEEP:
                out[k] = strip(v)
        return out
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.rsplit("/", 1)[-1])
        for v in node.values():
            found |= refs(v)
    elif isinstance(node, list):
        for v in node:
            found |= refs(v)
    return found


def main() -> None:
    source = json.loads(Path(sys.argv[1]).read_text())
    defs = source["definitions"]
    wanted, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        if name in wanted or name not in defs:
            continue
        wanted[name] = strip(defs[name])
        todo.extend(refs(wanted[name]) - set(wanted))
    out = Path(__file__).resolve().parent.parent / "apiserver" / "openapi" / "schemas.json"
    out.write_text(json.dumps({"definitions": dict(sorted(wanted.items()))}, indent=None, sort_keys=True) + "\n")
    print(f"wrote {len(wanted)} definitions to {out}")


if __name__ == "__main__":
    main()
