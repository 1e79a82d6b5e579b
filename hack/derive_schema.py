"""Derive the OpenAPI data picokube serves from the Kubernetes API's own OpenAPI v2 document.

    python hack/derive_schema.py [PATH/TO/kubernetes-openapi-v2.json]

(default path: `../shared/data/kubernetes-openapi-v2.json` beside the checkout) writes
`apiserver/openapi/schemas.json` holding, verbatim from upstream:
- `paths`: every path item of the resources picokube serves (`kube.resources.RESOURCES`),
  grouped by `group/version/plural`, subresources and the deprecated watch paths included;
- `parameters`: the shared parameters those operations reference;
- `definitions`: every definition reachable from those operations and from the served kinds,
  with descriptions, formats, defaults, required fields and `x-kubernetes-*` extensions.
The server builds `/openapi/v2` and `/openapi/v3/<gv>` from this file. Run again when the
served kinds change; the output is deterministic (sorted keys).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apiserver.openapi.paths import path_key  # noqa: E402 - after the path setup above
from kube.resources import RESOURCES  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "kubernetes-openapi-v2.json"
OUT = ROOT / "apiserver" / "openapi" / "schemas.json"
# Types clients send or receive beyond the served kinds' own operations.
EXTRA_ROOTS = ("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
               "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch")


def refs(node: Any) -> set[tuple[str, str]]:
    """(section, name) of every `$ref` under `node`: ("definitions", ...) or ("parameters", ...)."""
    found: set[tuple[str, str]] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            _, section, name = ref.split("/", 2)
            found.add((section, name))
        for v in node.values():
            found |= refs(v)
    elif isinstance(node, list):
        for v in node:
            found |= refs(v)
    return found


def kind_roots(defs: dict[str, Any]) -> set[str]:
    served = {(r.group, r.version, k) for r in RESOURCES for k in (r.kind, r.list_kind)}
    return {name for name, d in defs.items()
            for gvk in d.get("x-kubernetes-group-version-kind") or []
            if (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")) in served}


def derive(source: dict[str, Any]) -> dict[str, Any]:
    wanted = {f"{r.group}/{r.version}/{r.plural}" for r in RESOURCES}
    paths: dict[str, dict[str, Any]] = {}
    for path, item in source["paths"].items():
        key = path_key(path)
        if key is not None and key.resource in wanted:
            paths.setdefault(key.resource, {})[path] = item
    out: dict[str, dict[str, Any]] = {"definitions": {}, "parameters": {}}
    todo = {("definitions", n) for n in kind_roots(source["definitions"]) | set(EXTRA_ROOTS)} | refs(paths)
    while todo:
        section, name = todo.pop()
        if name in out[section]:
            continue
        out[section][name] = source[section][name]
        todo |= refs(out[section][name])
    return {"paths": paths, **out}


def main() -> None:
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    derived = derive(json.loads(src.read_text()))
    OUT.write_text(json.dumps(derived, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {len(derived['definitions'])} definitions, {sum(map(len, derived['paths'].values()))} paths "
          f"to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
