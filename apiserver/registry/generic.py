"""The generic registry: create, get, list, update, patch, delete and watch for any kind.

Mirrors apiserver's registry/generic/registry.Store. Objects are JSON dicts; the kind's
Strategy supplies what differs. Invariants kept here for every kind:
- `resourceVersion` is the etcd mod revision; it is never stored inside the value, only
  filled in on the way out, so it cannot go stale;
- every update is a compare-and-swap on that revision; a client-supplied resourceVersion
  that is not the current one is a 409 Conflict, never a silent overwrite;
- `uid`, `creationTimestamp` and `generation` are the server's: clients cannot change them;
- an object with `deletionTimestamp` and no finalizers left (and, for pods, no grace
  left) is removed from storage by the write that makes it so.
Storage errors are translated into `kube.errors` here and nowhere else.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Union

from kube.errors import (AlreadyExists, ApiError, BadRequest, Conflict, Invalid, NotFound, RequestEntityTooLarge,
                         ResourceExpired, ServiceUnavailable)
from kube.resources import ResourceInfo
from kube.selectors import FieldSelector, LabelSelector
from kube.timeutil import format_time, utc_now
from apiserver.fieldmanager import record_update
from apiserver.openapi.schema import node_for_gvk, normalize_quantities
from apiserver.registry.strategy import Obj, Strategy
from apiserver.storage import errors as serr
from apiserver.storage.interface import KeyValue, Storage

if TYPE_CHECKING:
    from apiserver.registry.watch_cache import CachedEvent, WatchCache

__all__ = ["RegistryStore", "DeleteOptions", "ListOptions", "now_rfc3339", "WatchItem"]

WatchItem = Union[dict[str, Any], tuple[str, "CachedEvent"]]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PROPAGATION_FINALIZERS = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}


def now_rfc3339(offset_seconds: int = 0) -> str:
    return format_time(utc_now() + timedelta(seconds=offset_seconds))


@dataclass(frozen=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


@dataclass(frozen=True)
class ListOptions:
    label_selector: LabelSelector = LabelSelector()
    field_selector: FieldSelector = FieldSelector()
    limit: int = 0
    continue_token: str | None = None
    resource_version: str | None = None


def _encode(obj: Obj) -> bytes:
    meta = obj.get("metadata") or {}
    rv = meta.pop("resourceVersion", None)
    try:
        return json.dumps(obj, separators=(",", ":")).encode()
    finally:
        if rv is not None:
            meta["resourceVersion"] = rv


class RegistryStore:
    """CRUD and watch for one resource on top of a Storage."""

    def __init__(self, storage: Storage, info: ResourceInfo, strategy: Strategy, *, prefix: str = "/registry",
                 max_object_bytes: int = 1536 * 1024) -> None:
        self.storage, self.info, self.strategy = storage, info, strategy
        self.root = f"{prefix.rstrip('/')}/{info.plural}/"
        self.max_object_bytes = max_object_bytes
        self.schema = node_for_gvk(info.group, info.version, info.kind)
        self.cache: WatchCache | None = None

    # --- keys and codec ------------------------------------------------------------------
    def key(self, namespace: str | None, name: str) -> str:
        return f"{self.root}{namespace}/{name}" if self.info.namespaced else f"{self.root}{name}"

    def prefix(self, namespace: str | None) -> str:
        return f"{self.root}{namespace}/" if self.info.namespaced and namespace else self.root

    def decode(self, value: bytes, revision: int) -> Obj:
        obj: Obj = json.loads(value)
        obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
        return obj

    def encode(self, obj: Obj) -> bytes:
        data = _encode(obj)
        if len(data) > self.max_object_bytes:
            raise RequestEntityTooLarge(f"{self.info.qualified} \"{obj['metadata'].get('name')}\" is too large: "
                                        f"{len(data)} bytes exceeds the object size limit of "
                                        f"{self.max_object_bytes} bytes")
        return data

    def not_found(self, name: str) -> NotFound:
        return NotFound(f'{self.info.qualified} "{name}" not found',
                        details={"name": name, "group": self.info.group, "kind": self.info.plural})

    def conflict(self, name: str) -> Conflict:
        return Conflict(f'Operation cannot be fulfilled on {self.info.qualified} "{name}": the object has been '
                        "modified; please apply your changes to the latest version and try again",
                        details={"name": name, "group": self.info.group, "kind": self.info.plural})

    def invalid(self, name: str, errs: list[Any]) -> Invalid:
        summary = ", ".join(str(e) for e in errs)
        return Invalid(f'{self.info.kind} "{name}" is invalid: {summary}' if len(errs) == 1 else
                       f'{self.info.kind} "{name}" is invalid: [{summary}]',
                       details={"name": name, "group": self.info.group, "kind": self.info.kind,
                                "causes": [e.cause() for e in errs]})

    # --- reads ---------------------------------------------------------------------------
    async def get(self, namespace: str | None, name: str) -> Obj:
        try:
            kv = await self.storage.get(self.key(namespace, name))
        except serr.KeyNotFound:
            raise self.not_found(name) from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        return self.decode(kv.value, kv.mod_revision)

    def matches(self, obj: Obj, opts: ListOptions) -> bool:
        if not opts.label_selector.empty() and not opts.label_selector.matches((obj.get("metadata") or {}).get("labels")):
            return False
        if not opts.field_selector.empty():
            return opts.field_selector.matches(lambda f: self.strategy.field_value(obj, f) or "")
        return True

    def check_field_selector(self, sel: FieldSelector) -> None:
        probe: Obj = {"metadata": {}}
        for field in sel.fields():
            if self.strategy.field_value(probe, field) is None:
                raise BadRequest(f'field label not supported: {field}')

    async def list(self, namespace: str | None, opts: ListOptions) -> Obj:
        """A list page; resourceVersion=0 is served from the watch cache (whole, as Kubernetes does)."""
        self.check_field_selector(opts.field_selector)
        if opts.resource_version == "0" and not opts.continue_token and self.cache is not None:
            await self.cache.wait_ready()
            items, rev = self.cache.list(self.prefix(namespace), lambda o: self.matches(o, opts))
            return {"kind": self.info.list_kind, "apiVersion": self.info.api_version,
                    "metadata": {"resourceVersion": str(rev)}, "items": items}
        revision, start_key = 0, None
        if opts.continue_token:
            try:
                token = json.loads(base64.urlsafe_b64decode(opts.continue_token.encode()))
                revision, start_key = int(token["rv"]), str(token["start"])
            except (ValueError, KeyError, TypeError):
                raise BadRequest("invalid continue token") from None
            if not start_key.startswith(self.prefix(namespace)):
                raise BadRequest("invalid continue token")
        items: list[Obj] = []
        next_key: str | None = None
        page = max(opts.limit, 0)
        try:
            while True:
                res = await self.storage.list(self.prefix(namespace), revision=revision, limit=page,
                                              start_key=start_key)
                revision = res.revision if revision == 0 else revision
                for kv in res.items:
                    obj = self.decode(kv.value, kv.mod_revision)
                    if self.matches(obj, opts):
                        items.append(obj)
                        if page and len(items) >= page:
                            next_key = kv.key + "\x00"
                            break
                if next_key is not None or not res.more or not res.items:
                    if next_key is not None and not res.more and res.items and next_key == res.items[-1].key + "\x00":
                        next_key = None  # the page ended exactly at the end of the list
                    break
                start_key = res.items[-1].key + "\x00"
        except serr.FutureRevision:
            raise ApiError(f"Too large resource version: {revision}", reason="Timeout", code=504) from None
        except serr.Compacted:
            raise ResourceExpired("The provided continue parameter is too old to display a consistent list result. "
                                  "You can start a new list without the continue parameter.") from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        meta: Obj = {"resourceVersion": str(revision)}
        if next_key is not None:
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"rv": revision, "start": next_key}).encode()).decode()
        return {"kind": self.info.list_kind, "apiVersion": self.info.api_version, "metadata": meta, "items": items}

    # --- writes --------------------------------------------------------------------------
    async def create(self, namespace: str | None, obj: Obj, *, dry_run: bool = False,
                     manager: str | None = None) -> Obj:
        """Store a new object; `manager` (None: the caller set managedFields) is recorded as its writer."""
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        if self.info.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))
        for server_field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(server_field, None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if self.strategy.tracks_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        self.strategy.prepare_for_create(obj)
        if self.schema is not None:
            normalize_quantities(obj, self.schema)
        errs = self.strategy.validate(obj)
        if errs:
            raise self.invalid(str(meta.get("name") or ""), errs)
        if manager is not None:
            meta.pop("managedFields", None)
            record_update(None, obj, manager=manager, node=self.schema, api_version=self.info.api_version,
                          now=meta["creationTimestamp"])
        data = self.encode(obj)
        if dry_run:
            return obj
        try:
            rev = await self.storage.create(self.key(namespace, meta["name"]), data)
        except serr.KeyExists:
            raise AlreadyExists(f'{self.info.qualified} "{meta["name"]}" already exists',
                                details={"name": meta["name"], "group": self.info.group,
                                         "kind": self.info.plural}) from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        meta["resourceVersion"] = str(rev)
        return obj

    def _carry_server_fields(self, new: Obj, old: Obj) -> None:
        nmeta, ometa = new.setdefault("metadata", {}), old["metadata"]
        for f in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                  "namespace"):
            if f in ometa:
                nmeta[f] = ometa[f]
            else:
                nmeta.pop(f, None)
        new["apiVersion"], new["kind"] = self.info.api_version, self.info.kind

    async def _write(self, namespace: str | None, name: str, mutate: Callable[[Obj, KeyValue], Obj], *,
                     subresource: str | None, dry_run: bool, manager: str | None) -> Obj:
        """Read-modify-CAS loop shared by update and patch; returns the object as stored."""
        result: dict[str, Obj] = {}
        key = self.key(namespace, name)

        async def try_update(kv: KeyValue) -> bytes | None:
            old = self.decode(kv.value, kv.mod_revision)
            new = mutate(copy.deepcopy(old), kv)
            if not isinstance(new, dict):
                raise BadRequest("the patched object is not a JSON object")
            new_meta = new.get("metadata")
            if not isinstance(new_meta, dict):
                raise BadRequest("metadata must be an object")
            rv = new_meta.get("resourceVersion")
            if rv not in (None, "") and str(rv) != str(kv.mod_revision):
                raise self.conflict(name)
            if new_meta.get("name") != name:
                raise BadRequest(f"the name of the object ({new_meta.get('name')}) does not match the name on the "
                                 f"URL ({name})")
            self._carry_server_fields(new, old)
            self.strategy.prepare_for_update(new, old, subresource=subresource)
            if self.schema is not None:
                normalize_quantities(new, self.schema)
            errs = self.strategy.validate_update(new, old)
            if errs:
                raise self.invalid(name, errs)
            new["metadata"]["resourceVersion"] = str(kv.mod_revision)
            if manager is not None:
                if "managedFields" in old["metadata"]:
                    new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
                else:
                    new["metadata"].pop("managedFields", None)
            result["obj"] = new
            if new == old or dry_run:
                return None
            if manager is not None:
                record_update(old, new, manager=manager, node=self.schema, api_version=self.info.api_version,
                              now=now_rfc3339(), subresource=subresource if subresource == "status" else None)
            return self.encode(new)

        try:
            kv = await self.storage.guaranteed_update(key, try_update)
        except serr.KeyNotFound:
            raise self.not_found(name) from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        obj = result["obj"]
        obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
        if not dry_run and self._ready_to_remove(obj):
            await self._remove(key, kv.mod_revision)
        return obj

    def _ready_to_remove(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if not meta.get("deletionTimestamp") or meta.get("finalizers") or self.strategy.holds_deletion(obj):
            return False
        return self.info.kind != "Pod" or not meta.get("deletionGracePeriodSeconds")

    async def _remove(self, key: str, revision: int) -> None:
        try:
            await self.storage.delete(key, expected_revision=revision)
        except (serr.KeyNotFound, serr.RevisionConflict):
            pass  # someone else wrote or removed it first; their write decides

    async def update(self, namespace: str | None, name: str, obj: Obj, *, subresource: str | None = None,
                     dry_run: bool = False, manager: str | None = None) -> Obj:
        def replace(_old: Obj, _kv: KeyValue) -> Obj:
            return copy.deepcopy(obj)
        return await self._write(namespace, name, replace, subresource=subresource, dry_run=dry_run, manager=manager)

    async def patch(self, namespace: str | None, name: str, apply: Callable[[Obj], Obj], *,
                    subresource: str | None = None, dry_run: bool = False, manager: str | None = None) -> Obj:
        """Read-modify-write with `apply(current) -> new`; retried on a concurrent write."""
        def patched(old: Obj, _kv: KeyValue) -> Obj:
            return apply(old)
        return await self._write(namespace, name, patched, subresource=subresource, dry_run=dry_run, manager=manager)

    async def delete(self, namespace: str | None, name: str, opts: DeleteOptions) -> Obj:
        key = self.key(namespace, name)
        while True:
            try:
                kv = await self.storage.get(key)
            except serr.KeyNotFound:
                raise self.not_found(name) from None
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            obj = self.decode(kv.value, kv.mod_revision)
            meta = obj["metadata"]
            if opts.precondition_uid and opts.precondition_uid != meta.get("uid"):
                raise Conflict(f"Precondition failed: UID in precondition: {opts.precondition_uid}, UID in object "
                               f"meta: {meta.get('uid')}")
            if opts.precondition_resource_version and opts.precondition_resource_version != meta["resourceVersion"]:
                raise Conflict(f"Precondition failed: ResourceVersion in precondition: "
                               f"{opts.precondition_resource_version}, ResourceVersion in object meta: "
                               f"{meta['resourceVersion']}")
            grace = self.strategy.graceful_delete_seconds(obj, opts.grace_period_seconds)
            pending = meta.get("deletionTimestamp")
            if pending and grace > 0 and meta.get("deletionGracePeriodSeconds") is not None:
                grace = min(grace, int(meta["deletionGracePeriodSeconds"]))
            # Orphan and Foreground propagation are finalizers the garbage collector acts on.
            finalizer = _PROPAGATION_FINALIZERS.get(opts.propagation_policy or "")
            if finalizer and not pending and finalizer not in (meta.get("finalizers") or []):
                meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f not in
                                      _PROPAGATION_FINALIZERS.values()] + [finalizer]
            if grace == 0 and not meta.get("finalizers") and not self.strategy.holds_deletion(obj):
                if opts.dry_run:
                    return obj
                try:
                    _, rev = await self.storage.delete(key, expected_revision=kv.mod_revision)
                except serr.RevisionConflict:
                    continue
                except serr.KeyNotFound:
                    raise self.not_found(name) from None
                return obj
            # Graceful or finalizer-held deletion: mark the object and let its owners finish.
            if pending and (meta.get("deletionGracePeriodSeconds") or 0) == grace:
                return obj
            meta["deletionTimestamp"] = pending if pending and grace else now_rfc3339(grace)
            self.strategy.prepare_for_delete(obj)
            if self.info.kind == "Pod" or grace:
                meta["deletionGracePeriodSeconds"] = grace
            if opts.dry_run:
                return obj
            try:
                rev = await self.storage.update(key, self.encode(obj), expected_revision=kv.mod_revision)
            except serr.RevisionConflict:
                continue
            except serr.KeyNotFound:
                raise self.not_found(name) from None
            meta["resourceVersion"] = str(rev)
            if self._ready_to_remove(obj):
                await self._remove(key, rev)
            return obj

    # --- watch ---------------------------------------------------------------------------
    def enable_watch_cache(self, cache: "WatchCache") -> None:
        self.cache = cache

    async def open_watch(self, namespace: str | None, opts: ListOptions, *, allow_bookmarks: bool = False,
                         bookmark_interval: float = 30.0) -> AsyncIterator[WatchItem]:
        """Start a watch and return its stream of events, filtered by the selectors.

        Raises before streaming for a bad request or (from the cache) a too old
        resourceVersion. With no resourceVersion (or "0") the current objects come first as
        ADDED events. An object that starts or stops matching the selectors arrives as
        ADDED or DELETED, as in Kubernetes. Items are `{"type", "object"}` dicts or, from
        the cache, `(type, CachedEvent)` pairs whose JSON line is serialized once.
        """
        self.check_field_selector(opts.field_selector)
        prefix = self.prefix(namespace)
        rv = opts.resource_version or ""
        try:
            start = None if rv in ("", "0") else int(rv)
        except ValueError:
            raise BadRequest(f"invalid resource version: {rv}") from None
        matches = lambda obj: self.matches(obj, opts)  # noqa: E731
        if self.cache is not None:
            await self.cache.wait_ready()
            watcher, initial, backlog = self.cache.watch(prefix, matches, resource_version=start)
            return self._cached_stream(watcher, initial, backlog, allow_bookmarks, bookmark_interval)
        return self._etcd_stream(prefix, opts, start)

    async def _cached_stream(self, watcher: Any, initial: list[Obj], backlog: list[Any], allow_bookmarks: bool,
                             bookmark_interval: float) -> AsyncIterator[WatchItem]:
        assert self.cache is not None
        try:
            for obj in initial:
                yield {"type": "ADDED", "object": obj}
            for item in backlog:
                yield item
            while True:
                try:
                    item = await asyncio.wait_for(watcher.queue.get(), bookmark_interval) \
                        if allow_bookmarks else await watcher.queue.get()
                except asyncio.TimeoutError:
                    yield self.bookmark(self.cache.revision)
                    continue
                if item is None:
                    return  # terminated: too slow, or the cache relisted
                yield item
                while not watcher.queue.empty():  # drain without awaiting, one wakeup per burst
                    item = watcher.queue.get_nowait()
                    if item is None:
                        return
                    yield item
        finally:
            self.cache.stop_watching(watcher)

    def bookmark(self, revision: int) -> Obj:
        return {"type": "BOOKMARK", "object": {"kind": self.info.kind, "apiVersion": self.info.api_version,
                                               "metadata": {"resourceVersion": str(revision)}}}

    async def _etcd_stream(self, prefix: str, opts: ListOptions, start: int | None) -> AsyncIterator[WatchItem]:
        if start is None:
            try:
                res = await self.storage.list(prefix)
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            after = res.revision
            for kv in res.items:
                obj = self.decode(kv.value, kv.mod_revision)
                if self.matches(obj, opts):
                    yield {"type": "ADDED", "object": obj}
        else:
            after = start
        try:
            async for ev in self.storage.watch(prefix, after_revision=after):
                out = self._translate(ev, opts)
                if out is not None:
                    yield out
        except serr.Compacted as e:
            raise ResourceExpired(f"too old resource version: {after} ({e.compacted_revision})") from None

    def _translate(self, ev: Any, opts: ListOptions) -> Obj | None:
        if ev.type == "PROGRESS":
            return self.bookmark(ev.revision)
        obj = self.decode(ev.value, ev.revision)
        if ev.type == "DELETED":
            return {"type": "DELETED", "object": obj} if self.matches(obj, opts) else None
        now = self.matches(obj, opts)
        before = ev.type == "MODIFIED" and ev.prev_value is not None and \
            self.matches(self.decode(ev.prev_value, ev.revision), opts)
        if now and before:
            return {"type": "MODIFIED", "object": obj}
        if now:
            return {"type": "ADDED", "object": obj}
        if before:
            return {"type": "DELETED", "object": obj}
        return None
