"""Which request comes next: a family, then one of its operations, then its details.

Families are drawn uniformly so that a resource with few operations is fuzzed as often as pods;
within a family, actions are weighted towards writes (where bad input does harm) and every
served operation of the drawn action is equally likely (the main resource and its status,
scale and other subresources alike).
"""

from __future__ import annotations

import random
from typing import Any

from tests.apiserver.fuzzing.builder import PATCH_TYPES, FuzzRequest, RequestBuilder
from tests.apiserver.fuzzing.catalog import Catalog, Family, Operation, control_escaped

__all__ = ["draw_operation", "draw_request"]

_WEIGHTS = {"post": 22, "put": 14, "patch": 20, "get": 10, "list": 10, "delete": 7, "deletecollection": 2,
            "watch": 1, "watchlist": 2}
_OBJECT_SUBRESOURCES = ("status", "scale", "ephemeralcontainers")
_PODS = "core/v1/pods"


def draw_operation(catalog: Catalog, rnd: random.Random) -> tuple[Family, Operation]:
    family = catalog.families[rnd.choice(sorted(catalog.families))]
    actions = sorted({op.action for op in family.operations})
    action = rnd.choices(actions, weights=[_WEIGHTS.get(a, 1) for a in actions])[0]
    return family, rnd.choice([op for op in family.operations if op.action == action])


def _url(op: Operation, namespace: str | None, name: str | None) -> str:
    path = op.path.replace("{namespace}", control_escaped(namespace or ""))
    return path.replace("{name}", control_escaped(name or ""))


def draw_request(b: RequestBuilder, family: Family, op: Operation) -> FuzzRequest:
    """A random request for `op` (may GET the live object first to start from it)."""
    namespace: str | None
    if op.on_item:
        namespace, name = b.target(family)
    else:
        namespace, name = (b.namespace() if op.namespaced else None), None
    req = FuzzRequest(op=op, family=family, method=op.method, url=_url(op, namespace, name), label=op.label,
                      namespace=namespace, name=name)
    handler = {"post": _create, "put": _update, "patch": _patch, "delete": _delete,
               "deletecollection": _delete_collection, "watch": _watch, "watchlist": _watch}.get(op.action, _read)
    handler(b, req)
    return req


def _read(b: RequestBuilder, req: FuzzRequest) -> None:
    b.query(req.op, req)
    if req.op.action == "list" and b.rnd.random() < 0.05:
        req.watch, req.label = True, "watch"
        req.params["watch"] = b.rnd.choice(["true", "1"])


def _watch(b: RequestBuilder, req: FuzzRequest) -> None:
    req.watch = True
    b.query(req.op, req)


def _create(b: RequestBuilder, req: FuzzRequest) -> None:
    op = req.op
    if op.on_item:
        assert req.name is not None
        body_name = req.name if b.rnd.random() < 0.85 else b.fresh_name(req.family)
    else:
        # A Binding names the pod it binds: aim most at pods that exist.
        aim = b.tracker.pick_key(_PODS, b.rnd) if op.kind == "Binding" and b.rnd.random() < 0.8 else None
        existing = aim or b.tracker.pick(req.family, b.rnd)
        body_name = existing[1] if existing and (aim or b.rnd.random() < 0.1) else b.fresh_name(req.family)
        req.name = body_name
    doc = b.new_object(op, req.family, req.namespace, body_name)
    b.encode(b.maybe_mutate(doc, 0.5), req)
    b.query(op, req, 0.15)


def _update(b: RequestBuilder, req: FuzzRequest) -> None:
    op = req.op
    assert req.name is not None
    sub = op.subresource if op.subresource in _OBJECT_SUBRESOURCES else ""
    live = b.live(req.family, req.namespace, req.name, sub)
    if live is None or b.rnd.random() < 0.1:
        live = b.new_object(op, req.family, req.namespace, req.name)
    elif b.rnd.random() < 0.3:
        meta = live.setdefault("metadata", {})
        meta["labels"] = {**(meta.get("labels") or {}), "fuzz": str(b.rnd.getrandbits(16))}
    b.encode(b.maybe_mutate(live, 0.6), req)
    b.query(op, req, 0.15)


def _patch(b: RequestBuilder, req: FuzzRequest) -> None:
    op = req.op
    assert req.name is not None
    types = [t for t in op.consumes if t in PATCH_TYPES] or list(PATCH_TYPES)
    content_type = b.rnd.choice(types) if b.rnd.random() < 0.95 else b.rnd.choice(
        ["application/json", "application/yaml", "text/plain", "application/apply-patch+cbor"])
    sub = op.subresource if op.subresource in _OBJECT_SUBRESOURCES else ""
    live: Any = b.live(req.family, req.namespace, req.name, sub)
    if live is None:
        live = b.new_object(op, req.family, req.namespace, req.name)
    b.patch_body(PATCH_TYPES.get(content_type, "merge"), live, req)
    req.headers["Content-Type"] = content_type
    req.label = f"{req.label}:{PATCH_TYPES.get(content_type, 'other')}"
    b.query(op, req, 0.2)


def _delete(b: RequestBuilder, req: FuzzRequest) -> None:
    if b.rnd.random() < 0.3:
        options = b.maybe_mutate(b.instances.of_definition("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
                                 0.5)
        b.encode(options, req)
    b.query(req.op, req, 0.3)


def _delete_collection(b: RequestBuilder, req: FuzzRequest) -> None:
    b.query(req.op, req, 0.5)
    if b.rnd.random() < 0.5:
        req.params["labelSelector"] = b.rnd.choice(["fuzz=none", "app=fuzz", "fuzz in (1,2)", "app"])
