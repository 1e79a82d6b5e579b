"""One random request for one served operation: URL, query, headers and body.

Bodies start from something plausible (the live object for an update, a seed or a
schema-shaped object for a create) and are then, more often than not, mutated. Patches are of
every type the operation consumes (JSON patch, merge, strategic merge, apply) plus a few it
does not; bodies go as JSON, sometimes as YAML, sometimes as garbage under a JSON content type.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import httpx
import yaml

from tests.apiserver.fuzzing.catalog import Family, Operation
from tests.apiserver.fuzzing.instances import InstanceMaker, dns_label
from tests.apiserver.fuzzing.mutations import ODD_STRINGS, Mutator, expand_deep, paths
from tests.apiserver.fuzzing.queries import QueryMaker
from tests.apiserver.fuzzing.seeds import seed_for

__all__ = ["PATCH_TYPES", "FuzzRequest", "RequestBuilder", "Tracker"]

PATCH_TYPES = {"application/json-patch+json": "json", "application/merge-patch+json": "merge",
                "application/strategic-merge-patch+json": "strategic", "application/apply-patch+yaml": "apply"}
_GARBAGE = [b"", b"{", b"null", b"[]", b"\"x\"", b"{\"a\":}", b"\xff\xfe", b"{}" * 3, b"12", b"true"]


@dataclass
class FuzzRequest:
    """A request to send, and what the oracle needs to know about its target."""

    op: Operation
    family: Family
    method: str
    url: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    namespace: str | None = None
    name: str | None = None
    watch: bool = False

    @property
    def dry_run(self) -> bool:
        return self.params.get("dryRun") == "All"

    def describe(self) -> str:
        body = (self.content or b"")[:600].decode("utf-8", "replace")
        return f"{self.method} {self.url} params={self.params} headers={self.headers} body={body}"


class Tracker:
    """The objects the fuzzer believes exist, per family: what updates and deletes aim at."""

    def __init__(self) -> None:
        self.live: dict[str, list[tuple[str | None, str]]] = {}

    def add(self, family: Family, namespace: str | None, name: str) -> None:
        entries = self.live.setdefault(family.key, [])
        if (namespace, name) not in entries:
            entries.append((namespace, name))

    def discard(self, family: Family, namespace: str | None, name: str) -> None:
        entries = self.live.get(family.key, [])
        if (namespace, name) in entries:
            entries.remove((namespace, name))

    def pick(self, family: Family, rnd: random.Random) -> tuple[str | None, str] | None:
        return self.pick_key(family.key, rnd)

    def pick_key(self, key: str, rnd: random.Random) -> tuple[str | None, str] | None:
        entries = self.live.get(key)
        return rnd.choice(entries) if entries else None


class RequestBuilder:
    """Draws requests for operations from one random stream (deterministic per seed)."""

    def __init__(self, *, rnd: random.Random, definitions: dict[str, Any], namespaces: list[str],
                 include_bounded: bool, client: httpx.Client, tracker: Tracker) -> None:
        self.rnd, self.client, self.tracker, self.namespaces = rnd, client, tracker, namespaces
        self.instances = InstanceMaker(definitions, rnd)
        self.mutator = Mutator(rnd, include_bounded=include_bounded)
        self.queries = QueryMaker(rnd, include_bounded=include_bounded)

    # --- targets ---------------------------------------------------------------------------
    def namespace(self) -> str:
        roll = self.rnd.random()
        if roll < 0.9:
            return self.namespaces[0] if roll < 0.75 else self.rnd.choice(self.namespaces)
        return self.rnd.choice(["missing-ns", "UPPER", "a..b", "x" * 70, "%20"])

    def fresh_name(self, family: Family) -> str:
        if family.kind == "CustomResourceDefinition":
            return f"widgets.{dns_label(self.rnd, 'g')}.example.com"
        return dns_label(self.rnd)

    def target(self, family: Family) -> tuple[str | None, str]:
        existing = self.tracker.pick(family, self.rnd)
        roll = self.rnd.random()
        if existing is not None and roll < 0.8:
            return existing
        namespace = self.namespace() if family.namespaced else None
        if roll < 0.95:
            return namespace, self.fresh_name(family)
        return namespace, self.rnd.choice(["UPPER", "a..b", "x" * 300, "-", "%2e%2e", "a b", "ü", "a:b"])

    # --- bodies ----------------------------------------------------------------------------
    def new_object(self, op: Operation, family: Family, namespace: str | None, name: str) -> Any:
        """A plausible object of the operation's body kind, named `name`."""
        kind = op.kind if op.subresource else family.kind
        base = seed_for(kind, name) if self.rnd.random() < 0.8 else None
        if base is None and op.body_ref:
            made = self.instances.of_definition(op.body_ref)
            base = made if isinstance(made, dict) else {}
        base = base or {}
        api_version = f"{op.group}/{op.version}" if op.group else op.version
        meta: dict[str, Any] = {"name": name, "labels": {"app": "fuzz"}}
        if namespace is not None and self.rnd.random() < 0.5:
            meta["namespace"] = namespace
        if self.rnd.random() < 0.05:
            meta = {"generateName": "g-", "labels": {"app": "fuzz"}}
        return {"apiVersion": api_version, "kind": kind, "metadata": meta, **base}

    def live(self, family: Family, namespace: str | None, name: str, subresource: str = "") -> Any:
        resp = self.client.get(family.item_path(namespace, name, subresource))
        return resp.json() if resp.status_code == 200 else None

    def maybe_mutate(self, doc: Any, chance: float = 0.6) -> Any:
        if self.rnd.random() < chance:
            return self.mutator.mutate(doc, steps=self.rnd.choice([1, 1, 2, 3]))
        return doc

    def encode(self, doc: Any, request: FuzzRequest, content_type: str = "application/json") -> None:
        roll = self.rnd.random()
        if roll < 0.05:
            request.content, content_type = self.rnd.choice(_GARBAGE), content_type
        elif roll < 0.15 and content_type == "application/json":
            request.content, content_type = self.text(doc, yaml_text=True), "application/yaml"
        elif roll < 0.17:
            request.content, content_type = self.text(doc), self.rnd.choice(
                ["text/plain", "application/xml", "application/vnd.kubernetes.protobuf", "", "application/json; x"])
        else:
            request.content = self.text(doc)
        request.headers["Content-Type"] = content_type

    @staticmethod
    def text(doc: Any, *, yaml_text: bool = False) -> bytes:
        """The document as JSON (or YAML) bytes; NaN and lone surrogates are written as they are."""
        text = yaml.safe_dump(doc) if yaml_text else json.dumps(doc, allow_nan=True)
        return expand_deep(text).encode("utf-8", "surrogatepass")

    # --- patches ---------------------------------------------------------------------------
    def patch_body(self, kind: str, live: Any, request: FuzzRequest) -> None:
        doc = live if isinstance(live, dict) else {}
        if kind == "json":
            body: Any = [self._json_patch_op(doc) for _ in range(self.rnd.choice([1, 1, 2, 3]))]
            if self.rnd.random() < 0.1:
                body = self.rnd.choice([{}, [1], [{"op": "add"}], "x"])
        elif kind == "apply":
            body = self.maybe_mutate({k: v for k, v in doc.items() if k != "status"} or doc, 0.5)
            request.params.setdefault("fieldManager", "fuzz")
        else:
            body = self._fragment(doc)
            if kind == "strategic" and self.rnd.random() < 0.3:
                body = self._directive(body, doc)
        text = self.text(body, yaml_text=kind == "apply" and self.rnd.random() < 0.5)
        request.content = text if self.rnd.random() > 0.03 else self.rnd.choice(_GARBAGE)

    def _pointer(self, doc: Any) -> str:
        path = self.rnd.choice(paths(doc))
        pointer = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
        if self.rnd.random() < 0.15:
            pointer = self.rnd.choice(["", "/", "x", "/metadata/-", "/spec/nope/deeper", "/a~2b", "/-"])
        return pointer

    def _json_patch_op(self, doc: Any) -> dict[str, Any]:
        op: dict[str, Any] = {"op": self.rnd.choice(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
                              "path": self._pointer(doc)}
        if op["op"] in ("add", "replace", "test"):
            op["value"] = self.rnd.choice([1, "x", None, {"a": 1}, [1], "fuzz", -1, True])
        if op["op"] in ("move", "copy"):
            op["from"] = self._pointer(doc)
        if self.rnd.random() < 0.05:
            del op["path"]
        return op

    def _fragment(self, doc: dict[str, Any]) -> Any:
        if not doc or self.rnd.random() < 0.2:
            return self.maybe_mutate({"metadata": {"labels": {"fuzz": "x"}}}, 0.7)
        mutated = self.maybe_mutate(doc, 0.8)
        if not isinstance(mutated, dict):
            return mutated
        keys = [k for k in mutated if k not in ("apiVersion", "kind")] or list(mutated)
        chosen = self.rnd.sample(keys, k=min(len(keys), self.rnd.choice([1, 1, 2])))
        return {k: mutated[k] for k in chosen}

    def _directive(self, body: Any, doc: dict[str, Any]) -> Any:
        if not isinstance(body, dict):
            return body
        spec = body.setdefault("spec", {})
        if not isinstance(spec, dict):
            return body
        choice = self.rnd.choice(["patch", "order", "retain", "deleteprim", "bogus"])
        if choice == "patch":
            spec["$patch"] = self.rnd.choice(["delete", "replace", "merge", "bogus", 1])
        elif choice == "order":
            spec["$setElementOrder/containers"] = self.rnd.choice([[{"name": "c"}], [{"name": "z"}], "x", [1]])
        elif choice == "retain":
            spec["$retainKeys"] = self.rnd.choice([["replicas"], "x", [1], []])
        elif choice == "deleteprim":
            body["metadata"] = {"$deleteFromPrimitiveList/finalizers": self.rnd.choice([["a"], "x", [1]])}
        else:
            spec[self.rnd.choice(["$bogus", "$patch/x", "$setElementOrder/", "$retainKeys/x"])] = [1]
        return body

    # --- query -----------------------------------------------------------------------------
    def query(self, op: Operation, request: FuzzRequest, chance: float = 0.3) -> None:
        request.params.update(self.queries.params(op.query, chance=chance, skip=("watch", "follow")))

    def odd_string(self) -> str:
        return self.rnd.choice(ODD_STRINGS)
