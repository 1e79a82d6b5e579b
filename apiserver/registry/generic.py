"""The generic registry: create, get, list, update, patch, delete and watch for any kind.

Mirrors apiserver's registry/generic/registry.Store. Objects are JSON dicts; the kind's
Strategy supplies what differs. Invariants kept here for every kind:
- `resourceVersion` is the etcd mod revision; it is never stored inside the value, only
  filled in on the way out, so it cannot go stale;
- every update is a compare-and-swap on that revision; a client-supplied resourceVersion
  that is not the current one is a 409 Conflict, never a silent overwrite;
- `uid`, `creationTimestamp` and `generation` are the server's: clients cannot change them;
- an object with `deletionTimestamp` and no finalizers left (and, for kinds whose strategy
  waits for graceful termination, no grace left) is removed from storage by the write that
  makes it so;
- with a `RequestAdmission`, every create, update and delete passes the admission chain:
  mutating plugins before the strategy prepares and validates the object, validating plugins
  after it, right before storage; what a validating plugin holds is released once the write
  is done;
- kinds that hold members of a shared pool (a Service's cluster IP and node ports) take them
  in `begin_create`/`begin_update` after validation and before the write, which commits or
  reverts the returned `WriteTransaction`; `after_remove` runs once an object is gone from
  storage (see apiserver/registry/service/store.py).
Storage errors are translated into `kube.errors` here and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import secrets
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from apiserver.admission.chain import RequestAdmission
from apiserver.admission.interfaces import Attributes, Operation
from apiserver.fieldmanager import record_update
from apiserver.openapi.schema import node_for_gvk, normalize_quantities
from apiserver.registry.paging import (
    continue_too_old,
    decode_continue,
    encode_continue,
    list_too_old,
    parse_resource_version,
    too_large_resource_version,
)
from apiserver.registry.strategy import Obj, Strategy
from apiserver.registry.watch_event import WatchEvent
from apiserver.registry.watch_list import initial_events_end, start_watch_list
from apiserver.storage import errors as serr
from apiserver.storage.interface import KeyValue, Storage
from kube.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    InternalError,
    Invalid,
    NotFound,
    RequestEntityTooLarge,
    ResourceExpired,
    ServiceUnavailable,
)
from kube.resources import ResourceInfo
from kube.selectors import FieldSelector, LabelSelector
from kube.timeutil import format_time, utc_now
from kube.tracing import TRACE_ANNOTATION, attrs, object_ref, phase, stamp

if TYPE_CHECKING:
    from apiserver.registry.lister import CacheLister
    from apiserver.registry.watch_cache import CacheWatcher, WatchCache

__all__ = ["RegistryStore", "DeleteOptions", "ListOptions", "WriteTransaction", "now_rfc3339"]

Objects = list[Obj]
Events = list[WatchEvent]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PROPAGATION_FINALIZERS = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}


def _carry_trace_context(new_meta: Obj, old_meta: Obj) -> None:
    """The trace annotation is the server's: a client's copy of it never counts as a change."""
    value = (old_meta.get("annotations") or {}).get(TRACE_ANNOTATION)
    annotations = new_meta.get("annotations")
    if value is not None:
        if not isinstance(annotations, dict):
            annotations = new_meta["annotations"] = {}
        annotations[TRACE_ANNOTATION] = value
    elif isinstance(annotations, dict) and TRACE_ANNOTATION in annotations:
        del annotations[TRACE_ANNOTATION]
        if not annotations:
            del new_meta["annotations"]


def unreadable(e: serr.TransformFailed) -> InternalError:
    """Upstream's answer for a stored value it cannot decrypt: a 500 naming the key."""
    return InternalError(f"Internal error occurred: {e}", details={"causes": [{"message": str(e)}]})


_MAX_OFFSET_SECONDS = 100 * 365 * 24 * 3600
"""How far from now a computed time may be: a grace period of a billion years is taken as a century,
so the time stays one that RFC 3339 (and Python's datetime) can write."""


def now_rfc3339(offset_seconds: int = 0) -> str:
    """Now plus `offset_seconds` (clamped to a century either way), as an RFC 3339 time."""
    offset = max(-_MAX_OFFSET_SECONDS, min(offset_seconds, _MAX_OFFSET_SECONDS))
    return format_time(utc_now() + timedelta(seconds=offset))


@dataclass(frozen=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False
    orphan_dependents: bool | None = None


@dataclass(frozen=True)
class ListOptions:
    label_selector: LabelSelector = LabelSelector()
    field_selector: FieldSelector = FieldSelector()
    limit: int = 0
    continue_token: str | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None
    send_initial_events: bool | None = None
    """None: not asked (classic watch semantics); True/False: a streaming list's choice."""


class WriteTransaction:
    """What a write took beyond its own object: `commit` once stored, `revert` if not (both idempotent)."""

    async def commit(self) -> None:
        """The write is stored: finish (release what the object no longer holds)."""

    async def revert(self) -> None:
        """The write failed or was a dry run: give back what was taken for it."""


_NO_TRANSACTION = WriteTransaction()


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
        except serr.TransformFailed as e:
            raise unreadable(e) from e
        return self.decode(kv.value, kv.mod_revision)

    def matches(self, obj: Obj, opts: ListOptions) -> bool:
        labels = (obj.get("metadata") or {}).get("labels")
        if not opts.label_selector.empty() and not opts.label_selector.matches(labels):
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
        """A list page, read as upstream reads it.

        resourceVersion "0" (any) is served whole from the watch cache; resourceVersion N with
        resourceVersionMatch=Exact reads the snapshot at N (410 once compacted); otherwise the
        latest snapshot, which must be at least N (504 Too large resource version if not). A
        page cut by `limit` carries a continue token for the same snapshot and, when nothing
        was filtered out (no selectors), `remainingItemCount`.
        """
        self.check_field_selector(opts.field_selector)
        requested = parse_resource_version(opts.resource_version)
        exact = opts.resource_version_match == "Exact"
        if requested == 0 and not opts.continue_token and self.cache is not None:
            await self.cache.wait_ready()
            cached, rev = self.cache.list(self.prefix(namespace), lambda o: self.matches(o, opts))
            return self._list_object(cached, {"resourceVersion": str(rev)})
        revision, start_key = 0, None
        if opts.continue_token:
            if requested:
                raise BadRequest("specifying resource version is not allowed when using continue")
            revision, start_key = decode_continue(opts.continue_token, self.prefix(namespace))
        elif exact and requested:
            revision = requested
        try:
            items, revision, next_key, remaining = await self._read_page(namespace, opts, revision, start_key)
        except serr.FutureRevision:
            raise too_large_resource_version(revision, await self._current_revision()) from None
        except serr.Compacted:
            raise (continue_too_old() if opts.continue_token else list_too_old()) from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        except serr.TransformFailed as e:
            raise unreadable(e) from e
        if requested and revision < requested:
            raise too_large_resource_version(requested, revision)
        meta: Obj = {"resourceVersion": str(revision)}
        if next_key is not None:
            meta["continue"] = encode_continue(revision, next_key)
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        return self._list_object(items, meta)

    def _list_object(self, items: Objects, meta: Obj) -> Obj:
        return {"kind": self.info.list_kind, "apiVersion": self.info.api_version, "metadata": meta, "items": items}

    async def _current_revision(self) -> int:
        try:
            return await self.storage.current_revision()
        except serr.StorageError:
            return 0

    async def _read_page(self, namespace: str | None, opts: ListOptions, revision: int,
                         start_key: str | None) -> tuple[Objects, int, str | None, int | None]:
        """(matching items, snapshot revision, key to continue from or None, items left or None).

        Reads ranges of the snapshot until `limit` matching items are found or the prefix
        ends. How many items are left is known only without selectors (every key matches).
        """
        items: Objects = []
        page = max(opts.limit, 0)
        unfiltered = opts.label_selector.empty() and opts.field_selector.empty()
        while True:
            res = await self.storage.list(self.prefix(namespace), revision=revision, limit=page, start_key=start_key)
            revision = res.revision if revision == 0 else revision
            for i, kv in enumerate(res.items):
                obj = self.decode(kv.value, kv.mod_revision)
                if not self.matches(obj, opts):
                    continue
                items.append(obj)
                if page and len(items) >= page:
                    if i == len(res.items) - 1 and not res.more:
                        return items, revision, None, None  # the page ended exactly at the end
                    left = res.count - (i + 1) if unfiltered else None
                    return items, revision, kv.key + "\x00", left
            if not res.more or not res.items:
                return items, revision, None, None
            start_key = res.items[-1].key + "\x00"

    # --- writes --------------------------------------------------------------------------
    def attributes(self, admission: RequestAdmission, operation: Operation, *, namespace: str | None, name: str,
                   obj: Obj | None, old: Obj | None, subresource: str | None, dry_run: bool) -> Attributes:
        return admission.attributes(operation, resource=self.info, subresource=subresource, namespace=namespace,
                                    name=name, obj=obj, old=old, dry_run=dry_run)

    async def create(self, namespace: str | None, obj: Obj, *, dry_run: bool = False,
                     manager: str | None = None, admission: RequestAdmission | None = None) -> Obj:
        """Store a new object; `manager` (None: the caller set managedFields) is recorded as its writer."""
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        if admission is None:
            return await self._create(namespace, obj, meta, dry_run=dry_run, manager=manager, attrs=None)
        attrs = self.attributes(admission, Operation.CREATE, namespace=namespace, obj=obj, old=None, subresource=None,
                                name=str(meta.get("name") or meta.get("generateName") or ""), dry_run=dry_run)
        async with attrs.held:
            with phase("admission"):
                await admission.chain.admit(attrs)
            return await self._create(namespace, obj, meta, dry_run=dry_run, manager=manager, attrs=attrs,
                                      validate=admission.chain.validate)

    async def _create(self, namespace: str | None, obj: Obj, meta: Obj, *, dry_run: bool, manager: str | None,
                      attrs: Attributes | None,
                      validate: Callable[[Attributes], Awaitable[None]] | None = None) -> Obj:
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
        with phase("validation"):
            errs = self.strategy.validate(obj)
            if errs:
                raise self.invalid(str(meta.get("name") or ""), errs)
            if attrs is not None and validate is not None:
                attrs.name = str(meta["name"])
                await validate(attrs)
        txn = await self.begin_create(obj, dry_run=dry_run)
        try:
            rev = await self._store_new(namespace, obj, meta, manager=manager, dry_run=dry_run)
        except BaseException:
            await txn.revert()
            raise
        if dry_run:
            await txn.revert()
            return obj
        await txn.commit()
        meta["resourceVersion"] = str(rev)
        self.record_write(namespace, str(meta["name"]), rev)
        return obj

    async def _store_new(self, namespace: str | None, obj: Obj, meta: Obj, *, manager: str | None,
                         dry_run: bool) -> int:
        """Record the writer, encode and create the key; the new revision (0 for a dry run)."""
        if manager is not None:
            meta.pop("managedFields", None)
            record_update(None, obj, manager=manager, node=self.schema, api_version=self.info.api_version,
                          now=meta["creationTimestamp"])
        stamp(meta)
        data = self.encode(obj)
        if dry_run:
            return 0
        try:
            with phase("etcd create") as details:
                rev = await self.storage.create(self.key(namespace, meta["name"]), data)
                if details is not None:
                    details["etcd.revision"] = rev
        except serr.KeyExists:
            raise AlreadyExists(f'{self.info.qualified} "{meta["name"]}" already exists',
                                details={"name": meta["name"], "group": self.info.group,
                                         "kind": self.info.plural}) from None
        except serr.Unavailable as e:
            raise ServiceUnavailable(str(e)) from e
        return rev

    # --- hooks for kinds that take from shared pools ---------------------------------------
    async def begin_create(self, obj: Obj, *, dry_run: bool) -> WriteTransaction:
        """Take what a validated new object needs besides its key (may fill in fields, may raise)."""
        return _NO_TRANSACTION

    async def begin_update(self, new: Obj, old: Obj, *, dry_run: bool) -> WriteTransaction:
        """Take what a validated update of the main resource needs; release the rest on commit."""
        return _NO_TRANSACTION

    async def after_remove(self, obj: Obj) -> None:
        """The object is gone from storage: give back what it held."""

    def record_write(self, namespace: str | None, name: str, revision: int) -> None:
        """Name the object and its new resourceVersion on the write's span (when traced)."""
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute(attrs.OBJECT, object_ref(self.info.kind, namespace, name))
            span.set_attribute(attrs.RESOURCE_VERSION, str(revision))

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
                     subresource: str | None, dry_run: bool, manager: str | None,
                     admission: RequestAdmission | None) -> Obj:
        """Read-modify-CAS loop shared by update and patch; returns the object as stored."""
        async with contextlib.AsyncExitStack() as held:
            return await self._write_held(namespace, name, mutate, subresource=subresource, dry_run=dry_run,
                                          manager=manager, admission=admission, held=held)

    async def _write_held(self, namespace: str | None, name: str, mutate: Callable[[Obj, KeyValue], Obj], *,
                          subresource: str | None, dry_run: bool, manager: str | None,
                          admission: RequestAdmission | None, held: contextlib.AsyncExitStack) -> Obj:
        result: dict[str, Obj] = {}
        key = self.key(namespace, name)
        pending: list[WriteTransaction] = []  # what the latest attempt took (begin_update)

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
            attrs = None if admission is None else self.attributes(
                admission, Operation.UPDATE, namespace=namespace, name=name, obj=new, old=old,
                subresource=subresource, dry_run=dry_run)
            if admission is not None and attrs is not None:
                attrs.held = held
                with phase("admission"):
                    await admission.chain.admit(attrs)
            self.strategy.prepare_for_update(new, old, subresource=subresource)
            if self.schema is not None:
                normalize_quantities(new, self.schema)
            errs = self.strategy.validate_update(new, old) if subresource is None else \
                self.strategy.validate_subresource_update(new, old, subresource=subresource)
            if errs:
                raise self.invalid(name, errs)
            if admission is not None and attrs is not None:
                await admission.chain.validate(attrs)
            if subresource is None:
                if pending:  # an earlier attempt lost the race: give back what it took
                    await pending.pop().revert()
                pending.append(await self.begin_update(new, old, dry_run=dry_run))
            new["metadata"]["resourceVersion"] = str(kv.mod_revision)
            if manager is not None:
                if "managedFields" in old["metadata"]:
                    new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
                else:
                    new["metadata"].pop("managedFields", None)
            _carry_trace_context(new["metadata"], old["metadata"])
            result["obj"] = new
            if (new == old and not kv.stale) or dry_run:  # stale: rewrite under the current encryption key
                return None
            if manager is not None:
                record_update(old, new, manager=manager, node=self.schema, api_version=self.info.api_version,
                              now=now_rfc3339(), subresource=subresource if subresource == "status" else None)
            stamp(new["metadata"], old["metadata"])
            return self.encode(new)

        try:
            with phase("etcd update") as details:
                kv = await self.storage.guaranteed_update(key, try_update)
                if details is not None:
                    details["etcd.revision"] = kv.mod_revision
        except BaseException as e:
            for txn in pending:
                await txn.revert()
            if isinstance(e, serr.KeyNotFound):
                raise self.not_found(name) from None
            if isinstance(e, serr.Unavailable):
                raise ServiceUnavailable(str(e)) from e
            if isinstance(e, serr.TransformFailed):
                raise unreadable(e) from e
            raise
        for txn in pending:
            await (txn.revert() if dry_run else txn.commit())
        obj = result["obj"]
        obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
        self.record_write(namespace, name, kv.mod_revision)
        if not dry_run and self._ready_to_remove(obj):
            await self._remove(key, kv.mod_revision, obj)
        return obj

    def _ready_to_remove(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if not meta.get("deletionTimestamp") or meta.get("finalizers") or self.strategy.holds_deletion(obj):
            return False
        return not (self.strategy.waits_for_graceful_termination and meta.get("deletionGracePeriodSeconds"))

    async def _remove(self, key: str, revision: int, obj: Obj) -> None:
        try:
            await self.storage.delete(key, expected_revision=revision)
        except (serr.KeyNotFound, serr.RevisionConflict):
            return  # someone else wrote or removed it first; their write decides
        await self.after_remove(obj)

    async def update(self, namespace: str | None, name: str, obj: Obj, *, subresource: str | None = None,
                     dry_run: bool = False, manager: str | None = None,
                     admission: RequestAdmission | None = None) -> Obj:
        def replace(_old: Obj, _kv: KeyValue) -> Obj:
            return copy.deepcopy(obj)
        return await self._write(namespace, name, replace, subresource=subresource, dry_run=dry_run, manager=manager,
                                 admission=admission)

    async def patch(self, namespace: str | None, name: str, apply: Callable[[Obj], Obj], *,
                    subresource: str | None = None, dry_run: bool = False, manager: str | None = None,
                    admission: RequestAdmission | None = None) -> Obj:
        """Read-modify-write with `apply(current) -> new`; retried on a concurrent write."""
        def patched(old: Obj, _kv: KeyValue) -> Obj:
            return apply(old)
        return await self._write(namespace, name, patched, subresource=subresource, dry_run=dry_run, manager=manager,
                                 admission=admission)

    async def delete(self, namespace: str | None, name: str, opts: DeleteOptions, *,
                     admission: RequestAdmission | None = None) -> tuple[Obj, bool]:
        """Delete now, or mark for deletion when grace or finalizers hold the object.

        Returns the object (as last stored, or as marked) and whether it is gone now, as
        upstream's Store.Delete does; the REST layer decides what the answer shows.
        """
        async with contextlib.AsyncExitStack() as held:
            return await self._delete(namespace, name, opts, admission=admission, held=held)

    async def _delete(self, namespace: str | None, name: str, opts: DeleteOptions, *,
                      admission: RequestAdmission | None, held: contextlib.AsyncExitStack) -> tuple[Obj, bool]:
        key = self.key(namespace, name)
        admitted = False
        while True:
            try:
                kv = await self.storage.get(key)
            except serr.KeyNotFound:
                raise self.not_found(name) from None
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            except serr.TransformFailed as e:
                raise unreadable(e) from e
            obj = self.decode(kv.value, kv.mod_revision)
            meta = obj["metadata"]
            if opts.precondition_uid and opts.precondition_uid != meta.get("uid"):
                raise Conflict(f"Precondition failed: UID in precondition: {opts.precondition_uid}, UID in object "
                               f"meta: {meta.get('uid')}")
            if opts.precondition_resource_version and opts.precondition_resource_version != meta["resourceVersion"]:
                raise Conflict(f"Precondition failed: ResourceVersion in precondition: "
                               f"{opts.precondition_resource_version}, ResourceVersion in object meta: "
                               f"{meta['resourceVersion']}")
            if admission is not None and not admitted:
                attrs = self.attributes(admission, Operation.DELETE, namespace=namespace, name=name, obj=None,
                                        old=obj, subresource=None, dry_run=opts.dry_run)
                attrs.held = held
                await admission.chain.admit(attrs)
                await admission.chain.validate(attrs)
                admitted = True
            grace = self.strategy.graceful_delete_seconds(obj, opts.grace_period_seconds)
            pending = meta.get("deletionTimestamp")
            if pending and grace > 0 and meta.get("deletionGracePeriodSeconds") is not None:
                grace = min(grace, int(meta["deletionGracePeriodSeconds"]))
            # Orphan and Foreground propagation are finalizers the garbage collector acts on.
            finalizer = _PROPAGATION_FINALIZERS.get(opts.propagation_policy or "")
            if finalizer and not pending and finalizer not in (meta.get("finalizers") or []):
                meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f not in
                                      _PROPAGATION_FINALIZERS.values()] + [finalizer]
            if not pending:
                for own in self.strategy.delete_finalizers(obj):
                    if own not in (meta.get("finalizers") or []):
                        meta["finalizers"] = [*(meta.get("finalizers") or []), own]
            if grace == 0 and not meta.get("finalizers") and not self.strategy.holds_deletion(obj):
                if opts.dry_run:
                    return obj, True
                try:
                    _, rev = await self.storage.delete(key, expected_revision=kv.mod_revision)
                except serr.RevisionConflict:
                    continue
                except serr.KeyNotFound:
                    raise self.not_found(name) from None
                await self.after_remove(obj)
                return obj, True
            # Graceful or finalizer-held deletion: mark the object and let its owners finish.
            if pending and (meta.get("deletionGracePeriodSeconds") or 0) == grace:
                return obj, False
            meta["deletionTimestamp"] = pending if pending and grace else now_rfc3339(grace)
            self.strategy.prepare_for_delete(obj)
            if self.strategy.waits_for_graceful_termination or grace:
                meta["deletionGracePeriodSeconds"] = grace
            if opts.dry_run:
                return obj, False
            try:
                rev = await self.storage.update(key, self.encode(obj), expected_revision=kv.mod_revision)
            except serr.RevisionConflict:
                continue
            except serr.KeyNotFound:
                raise self.not_found(name) from None
            meta["resourceVersion"] = str(rev)
            if self._ready_to_remove(obj):
                await self._remove(key, rev, obj)
                return obj, True
            return obj, False

    # --- watch ---------------------------------------------------------------------------
    def enable_watch_cache(self, cache: WatchCache) -> None:
        self.cache = cache

    def lister(self) -> CacheLister:
        """A read-only view of this resource's watch cache (see `lister`)."""
        from apiserver.registry.lister import CacheLister
        return CacheLister(self)

    async def open_watch(self, namespace: str | None, opts: ListOptions, *, allow_bookmarks: bool = False,
                         bookmark_interval: float = 30.0) -> AsyncIterator[WatchEvent]:
        """Start a watch and return its stream of events, filtered by the selectors.

        Raises before streaming for a bad request or (from the cache) a too old
        resourceVersion. With no resourceVersion (or "0") the current objects come first as
        ADDED events. With `sendInitialEvents` the watch is a streaming list (see
        `watch_list`): its initial state, then (with bookmarks) the initial-events-end
        BOOKMARK. An object that starts or stops matching the selectors arrives as ADDED or
        DELETED, as in Kubernetes. Events from the cache share their encoded line with every
        other watcher that receives them.
        """
        self.check_field_selector(opts.field_selector)
        prefix = self.prefix(namespace)
        requested = parse_resource_version(opts.resource_version)
        matches = lambda obj: self.matches(obj, opts)  # noqa: E731
        streaming = opts.send_initial_events is not None
        if self.cache is None:
            return self._etcd_stream(prefix, opts, requested, allow_bookmarks=allow_bookmarks)
        if streaming:
            start = await start_watch_list(self, prefix, matches, send_initial_events=bool(opts.send_initial_events),
                                           requested=requested)
            watcher, initial, backlog = start.watcher, start.initial, start.backlog
            initial_end = start.initial_end if allow_bookmarks else None
        else:
            await self.cache.wait_ready()
            watcher, initial, backlog = self.cache.watch(prefix, matches, resource_version=requested or None)
            initial_end = None
        return self._cached_stream(watcher, initial, backlog, allow_bookmarks, bookmark_interval, initial_end)

    async def _cached_stream(self, watcher: CacheWatcher, initial: Objects, backlog: Events,
                             allow_bookmarks: bool, bookmark_interval: float,
                             initial_end: int | None = None) -> AsyncIterator[WatchEvent]:
        assert self.cache is not None
        try:
            for obj in initial:
                yield WatchEvent("ADDED", obj)
            if initial_end is not None:
                yield initial_events_end(self.info.kind, self.info.api_version, initial_end)
            for event in backlog:
                yield event
            while True:
                try:
                    item: WatchEvent | None = await asyncio.wait_for(watcher.queue.get(), bookmark_interval) \
                        if allow_bookmarks else await watcher.queue.get()
                except TimeoutError:
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

    def bookmark(self, revision: int) -> WatchEvent:
        return WatchEvent("BOOKMARK", {"kind": self.info.kind, "apiVersion": self.info.api_version,
                                       "metadata": {"resourceVersion": str(revision)}})

    async def _etcd_stream(self, prefix: str, opts: ListOptions, requested: int | None, *,
                           allow_bookmarks: bool) -> AsyncIterator[WatchEvent]:
        """A watch straight from etcd (no watch cache): the same semantics, without waiting."""
        send = opts.send_initial_events
        if send or (send is None and not requested):
            try:
                res = await self.storage.list(prefix)
            except serr.Unavailable as e:
                raise ServiceUnavailable(str(e)) from e
            except serr.TransformFailed as e:
                raise unreadable(e) from e
            after = res.revision
            for kv in res.items:
                obj = self.decode(kv.value, kv.mod_revision)
                if self.matches(obj, opts):
                    yield WatchEvent("ADDED", obj)
            if send and allow_bookmarks:
                yield initial_events_end(self.info.kind, self.info.api_version, after)
        elif requested:
            after = requested
        else:
            after = await self.storage.current_revision()
        try:
            async for ev in self.storage.watch(prefix, after_revision=after):
                out = self._translate(ev, opts)
                if out is not None:
                    yield out
        except serr.Compacted as e:
            raise ResourceExpired(f"too old resource version: {after} ({e.compacted_revision})") from None

    def _translate(self, ev: Any, opts: ListOptions) -> WatchEvent | None:
        if ev.type == "PROGRESS":
            return self.bookmark(ev.revision)
        obj = self.decode(ev.value, ev.revision)
        if ev.type == "DELETED":
            return WatchEvent("DELETED", obj) if self.matches(obj, opts) else None
        now = self.matches(obj, opts)
        before = ev.type == "MODIFIED" and ev.prev_value is not None and \
            self.matches(self.decode(ev.prev_value, ev.revision), opts)
        if now and before:
            return WatchEvent("MODIFIED", obj)
        if now:
            return WatchEvent("ADDED", obj)
        if before:
            return WatchEvent("DELETED", obj)
        return None
