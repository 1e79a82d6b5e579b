"""One compare-and-swap write of an object, starting from the watch cache's copy.

Mirrors the apiserver's `GuaranteedUpdate` with a cached existing object (what upstream's
BindingREST and the pod status writes use): the object to change is taken from the
resource's watch cache when it holds one, so the common case is a single etcd transaction
(compare the mod revision, put) and no read. The revision compare keeps it exactly as safe
as a read-modify-write:
- a stale cached copy makes the transaction fail, and the failed transaction answers etcd's
  current value, from which the change is computed again (no extra read);
- a refusal (`ApiError` from `mutate`) computed from a cached copy is not trusted: the
  object is read from etcd and `mutate` runs again on that, so no 409 is ever answered from
  a stale cache;
- a missing key (a cache miss that etcd confirms, or a key deleted meanwhile) is 404.
Unlike the generic update path this runs no strategy, validation or field manager: it is
for server-owned writes whose change is fixed by the server (a binding sets spec.nodeName
and one condition), as upstream's are. Admission still sees the write (UPDATE on the
subresource, old and new object) when a chain is given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from apiserver.admission.chain import RequestAdmission
from apiserver.admission.interfaces import Operation
from apiserver.registry.generic import RegistryStore, unreadable
from apiserver.storage import errors as serr
from kube.errors import ApiError, ServiceUnavailable
from kube.tracing import stamp

__all__ = ["write_from_cache", "writable_copy"]

Obj = dict[str, Any]

MAX_ATTEMPTS = 16


def writable_copy(obj: Obj, *parts: str) -> Obj:
    """`obj` with its top level, metadata (and its annotations) and the named `parts` copied one level deep.

    Cheap enough for the hot path and enough for a change that replaces values inside those
    parts: nested values left uncopied must not be changed in place (the original is the
    cache's own).
    """
    new = dict(obj)
    meta = new["metadata"] = dict(obj.get("metadata") or {})
    if isinstance(meta.get("annotations"), dict):
        meta["annotations"] = dict(meta["annotations"])
    for part in parts:
        value = obj.get(part)
        new[part] = dict(value) if isinstance(value, dict) else {}
    return new


async def write_from_cache(store: RegistryStore, namespace: str | None, name: str, mutate: Callable[[Obj], Obj], *,
                           subresource: str, dry_run: bool = False,
                           admission: RequestAdmission | None = None) -> Obj:
    """Apply `mutate(copy of current) -> new` in one CAS, retried on conflict; return the object as stored.

    `mutate` gets a `writable_copy` of the object (top level, metadata, spec and status
    copied) and may raise an `ApiError` to refuse. Raises NotFound when the object does
    not exist, Conflict after MAX_ATTEMPTS lost races. Safe to call concurrently.
    """
    key = store.key(namespace, name)
    old = store.cache.get(key) if store.cache is not None else None
    proven = old is None  # True once `old` is what etcd answered, not the cache's copy
    async with contextlib.AsyncExitStack() as held:
        for _ in range(MAX_ATTEMPTS):
            if old is None:
                old = await store.get(namespace, name)
            try:
                new = mutate(writable_copy(old, "spec", "status"))
            except ApiError:
                if proven:
                    raise
                old, proven = None, True  # decide on etcd's value, not a possibly stale copy
                continue
            if admission is not None:
                attrs = store.attributes(admission, Operation.UPDATE, namespace=namespace, name=name, obj=new,
                                         old=old, subresource=subresource, dry_run=dry_run)
                attrs.held = held
                await admission.chain.admit(attrs)
                await admission.chain.validate(attrs)
            stamp(new["metadata"], old["metadata"])
            data, expected = store.encode(new), int(old["metadata"]["resourceVersion"])
            if dry_run:
                return new
            try:
                revision = await store.storage.update(key, data, expected_revision=expected)
            except serr.RevisionConflict as conflict:
                if conflict.current is None:
                    raise store.not_found(name) from None
                old, proven = store.decode(conflict.current.value, conflict.current.mod_revision), True
                continue
            except serr.KeyNotFound:
                raise store.not_found(name) from None
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            except serr.TransformFailed as e:
                raise unreadable(e) from e
            new["metadata"]["resourceVersion"] = str(revision)
            store.record_write(namespace, name, revision)
            return new
    raise store.conflict(name)

