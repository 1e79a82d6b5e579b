"""The CRD controller: from each CustomResourceDefinition, its served custom resources.

Runs inside the API server process, as apiextensions-apiserver runs its naming,
establishing and finalizing controllers in-process. One task watches the CRDs and queues
their names; one worker syncs one CRD at a time (level-based: it reads the CRD as stored):
- naming (`NamesAccepted`): the CRD's plural, singular, short names, kind and list kind must
  not be in use by another CRD of the same group; accepted names go to `status.acceptedNames`;
- serving: once the names are accepted, every served version is registered in the resource
  registry (a `CustomResourceStore` with its watch cache), versions no longer served are
  removed, and the OpenAPI definitions follow; then `Established` turns True;
- finalizing: a CRD marked for deletion (Terminating, with the cleanup finalizer) has every
  custom resource deleted; once none remain it stops being served and the finalizer goes.
A CRD whose sync fails (or whose objects still wait on their finalizers) is retried after
a second. Nothing here blocks a request: the registry changes on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from apiserver.apiextensions.crd_strategy import CLEANUP_FINALIZER, set_condition, storage_version
from apiserver.apiextensions.custom_resource import CustomResourceStore, CustomResourceStrategy, CustomScaleStorage
from apiserver.openapi.schema import register_custom, unregister_custom
from apiserver.registry.generic import DeleteOptions, ListOptions, RegistryStore
from apiserver.registry.resource_registry import ResourceRegistry, ServedResource
from apiserver.registry.rest import ResourceStorage, StatusStorage
from apiserver.registry.rest import Storage as RestStorage
from apiserver.registry.rest.interfaces import Context, Obj
from apiserver.registry.watch_cache import WatchCache
from apiserver.storage.interface import Storage
from kube.errors import ApiError, MethodNotAllowed, NotFound
from kube.resources import ResourceInfo

__all__ = ["CRDController"]

logger = logging.getLogger(__name__)
_RETRY_SECONDS = 1.0


class CustomResourceStorage(ResourceStorage):
    """The main resource of a custom kind; refuses creates while its CRD is being deleted."""

    terminating = False

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        if self.terminating:
            raise MethodNotAllowed("create not allowed while custom resource definition is terminating")
        return await super().create(ctx, name, obj)


@dataclass
class _Served:
    """What one CRD currently serves: per version, its digest, store and watch-cache task."""

    versions: dict[str, tuple[str, ServedResource, asyncio.Task[None] | None]] = field(default_factory=dict)


def _names(crd: Obj) -> dict[str, Any]:
    return dict((crd.get("spec") or {}).get("names") or {})


def _definition_name(group: str, version: str, kind: str) -> str:
    return ".".join([*reversed(group.split(".")), version, kind])


def _definitions(group: str, version: str, kind: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The OpenAPI definitions of a custom kind and its list, shaped as upstream publishes them."""
    name = _definition_name(group, version, kind)
    string = {"type": "string"}
    meta = {"apiVersion": {**string, "description": "APIVersion defines the versioned schema of this "
                           "representation of an object."},
            "kind": {**string, "description": "Kind is a string value representing the REST resource this object "
                     "represents."}}
    props = {**meta, "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                                  "description": "Standard object's metadata."},
             **(schema.get("properties") or {})}
    item = {**schema, "type": "object", "properties": props,
            "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": kind}]}
    listed = {"type": "object", "required": ["items"],
              "description": f"{kind}List is a list of {kind}",
              "properties": {**meta, "items": {"type": "array", "items": {"$ref": f"#/definitions/{name}"}},
                             "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}},
              "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": kind + "List"}]}
    return name, {name: item, name + "List": listed}


class CRDController:
    """Keeps the resource registry serving exactly what the stored CRDs define."""

    def __init__(self, *, crds: RegistryStore, registry: ResourceRegistry, storage: Storage, prefix: str,
                 max_object_bytes: int, watch_cache: bool) -> None:
        self.crds, self.registry, self.storage = crds, registry, storage
        self.prefix, self.max_object_bytes, self.watch_cache = prefix, max_object_bytes, watch_cache
        self._served: dict[str, _Served] = {}
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._timers: set[asyncio.TimerHandle] = set()

    async def run(self) -> None:
        """Watch and sync until cancelled; on the way out stop every custom watch cache."""
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._watch())
                tg.create_task(self._work())
        finally:
            for timer in self._timers:
                timer.cancel()
            for served in self._served.values():
                for _, _, task in served.versions.values():
                    if task is not None:
                        task.cancel()

    async def _watch(self) -> None:
        while True:
            try:
                listed = await self.crds.list(None, ListOptions())
                for crd in listed["items"]:
                    self._queue.put_nowait(crd["metadata"]["name"])
                events = await self.crds.open_watch(
                    None, ListOptions(resource_version=listed["metadata"]["resourceVersion"]))
                async for event in events:
                    if event.type in ("ADDED", "MODIFIED", "DELETED"):
                        self._queue.put_nowait(event.object["metadata"]["name"])
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("Watching CustomResourceDefinitions failed, will retry")
            await asyncio.sleep(_RETRY_SECONDS)

    async def _work(self) -> None:
        while True:
            name = await self._queue.get()
            try:
                done = await self.sync(name)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("Syncing CustomResourceDefinition failed, will retry", extra={"crd": name})
                done = False
            if not done:
                self._retry(name)

    def _retry(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            self._queue.put_nowait(name)
        handle = loop.call_later(_RETRY_SECONDS, fire)
        self._timers.add(handle)

    async def sync(self, name: str) -> bool:
        """Bring what `name` serves in line with the stored CRD; False when it must be retried."""
        try:
            crd = await self.crds.get(None, name)
        except NotFound:
            self._unserve(name)
            return True
        if crd["metadata"].get("deletionTimestamp"):
            return await self._finalize(crd)
        status = json.loads(json.dumps(crd.get("status") or {}))
        others = (await self.crds.list(None, ListOptions()))["items"]
        accepted, reason, message = self._accept_names(crd, others)
        new = dict(crd)
        new["status"] = status
        if accepted:
            set_condition(new, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
            status["acceptedNames"] = _names(crd)
            self._serve(crd)
            set_condition(new, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
        else:
            set_condition(new, "NamesAccepted", "False", reason, message)
            if not any(c.get("type") == "Established" and c.get("status") == "True"
                       for c in status.get("conditions") or []):
                set_condition(new, "Established", "False", "NotAccepted", "not all names are accepted")
        if status != (crd.get("status") or {}):
            await self._write_status(name, status)
        return True

    async def _write_status(self, name: str, status: Obj) -> None:
        def put(current: Obj) -> Obj:
            current["status"] = status
            return current
        with contextlib.suppress(NotFound):
            await self.crds.patch(None, name, put, subresource="status")

    def _accept_names(self, crd: Obj, others: list[Obj]) -> tuple[bool, str, str]:
        """Whether the CRD's names are free in its group (upstream's naming controller), with why not."""
        spec = crd.get("spec") or {}
        group, names, me = spec.get("group"), _names(crd), crd["metadata"]["name"]
        for other in others:
            ospec = other.get("spec") or {}
            if other["metadata"]["name"] == me or ospec.get("group") != group:
                continue
            taken = (other.get("status") or {}).get("acceptedNames") or {}
            plurals = {taken.get("plural"), taken.get("singular"), *(taken.get("shortNames") or [])} - {None, ""}
            if names.get("plural") in plurals:
                return False, "PluralConflict", f'"{names.get("plural")}" is already in use'
            if names.get("singular") in plurals:
                return False, "SingularConflict", f'"{names.get("singular")}" is already in use'
            for short in names.get("shortNames") or []:
                if short in plurals:
                    return False, "ShortNamesConflict", f'"{short}" is already in use'
            kinds = {taken.get("kind"), taken.get("listKind")} - {None, ""}
            if names.get("kind") in kinds:
                return False, "KindConflict", f'"{names.get("kind")}" is already in use'
            if names.get("listKind") in kinds:
                return False, "ListKindConflict", f'"{names.get("listKind")}" is already in use'
        return True, "", ""

    # --- serving ---------------------------------------------------------------------------
    def _serve(self, crd: Obj) -> None:
        name, spec = crd["metadata"]["name"], crd.get("spec") or {}
        served = self._served.setdefault(name, _Served())
        stored = storage_version(crd) or ""
        wanted = {v["name"]: v for v in spec.get("versions") or [] if v.get("served")}
        for version in list(served.versions):
            if version not in wanted:
                self._unserve_version(crd, name, version)
        for version, vspec in wanted.items():
            digest = hashlib.sha256(json.dumps([spec.get("names"), spec.get("scope"), stored, vspec],
                                               sort_keys=True).encode()).hexdigest()
            current = served.versions.get(version)
            if current is not None and current[0] == digest:
                continue
            if current is not None:
                self._unserve_version(crd, name, version)
            served.versions[version] = (digest, *self._serve_version(spec, vspec, stored))

    def _serve_version(self, spec: Obj, vspec: Obj, stored: str) -> tuple[ServedResource, asyncio.Task[None] | None]:
        names, group, version = spec.get("names") or {}, spec["group"], vspec["name"]
        schema = ((vspec.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
        subresources = vspec.get("subresources") or {}
        status_enabled = "status" in subresources
        info = ResourceInfo(group, version, names["kind"], names["plural"], names.get("singular") or "",
                            spec.get("scope") == "Namespaced", tuple(names.get("shortNames") or ()),
                            tuple(names.get("categories") or ()),
                            subresources=tuple(s for s in ("status", "scale") if s in subresources),
                            has_status=status_enabled)
        def_name, defs = _definitions(group, version, info.kind, schema)
        register_custom((group, version, info.kind), defs, name=def_name, structural=schema)
        strategy = CustomResourceStrategy(info, schema=schema, status_enabled=status_enabled)
        store = CustomResourceStore(self.storage, info, strategy, prefix=self.prefix, storage_version=stored,
                                    max_object_bytes=self.max_object_bytes)
        task = None
        if self.watch_cache:
            cache = WatchCache(self.storage, store.prefix(None), store.decode)
            store.enable_watch_cache(cache)
            task = asyncio.create_task(cache.run(), name=f"watch-cache-{cache.prefix}")
        subs: dict[str, RestStorage] = {}
        if status_enabled:
            subs["status"] = StatusStorage(store)
        scale = subresources.get("scale")
        if isinstance(scale, dict):
            subs["scale"] = CustomScaleStorage(store, spec_path=scale["specReplicasPath"],
                                               status_path=scale["statusReplicasPath"],
                                               selector_path=scale.get("labelSelectorPath"))
        columns = tuple(vspec.get("additionalPrinterColumns") or ())
        served = ServedResource(info, CustomResourceStorage(store), subs, store, custom=True, printer_columns=columns)
        self.registry.add(served)
        logger.info("Serving custom resource", extra={"resource": info.qualified, "version": version})
        return served, task

    def _unserve_version(self, crd: Obj | None, name: str, version: str) -> None:
        served = self._served.get(name)
        entry = served.versions.pop(version, None) if served else None
        if entry is None:
            return
        _, resource, task = entry
        info = resource.info
        if self.registry.lookup(info.group, info.version, info.plural) is resource:
            self.registry.remove(info.group, info.version, info.plural)
        unregister_custom((info.group, info.version, info.kind))
        if task is not None:
            task.cancel()
        logger.info("Stopped serving custom resource", extra={"resource": info.qualified, "version": version})

    def _unserve(self, name: str) -> None:
        served = self._served.get(name)
        for version in list(served.versions) if served else []:
            self._unserve_version(None, name, version)
        self._served.pop(name, None)

    # --- finalizing -------------------------------------------------------------------------
    async def _finalize(self, crd: Obj) -> bool:
        name = crd["metadata"]["name"]
        if CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            self._unserve(name)
            return True
        if not self._served.get(name) and ((crd.get("status") or {}).get("acceptedNames") or {}).get("plural"):
            self._serve(crd)  # deleted before this server served it: serve it to delete its objects
        served = self._served.get(name)
        remaining = 0
        for _, resource, _ in list(served.versions.values()) if served else []:
            if isinstance(resource.storage, CustomResourceStorage):
                resource.storage.terminating = True
        if served and served.versions:
            _, resource, _ = next(iter(served.versions.values()))
            remaining = await self._delete_all(resource)
        if remaining:
            return False
        self._unserve(name)

        def drop_finalizer(current: Obj) -> Obj:
            meta = current["metadata"]
            meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER]
            return current
        with contextlib.suppress(NotFound):
            await self.crds.patch(None, name, drop_finalizer)
        return True

    async def _delete_all(self, resource: ServedResource) -> int:
        """Delete every custom resource (once each); how many still exist, waiting on their finalizers."""
        assert resource.store is not None
        listed = await resource.store.list(None, ListOptions())
        for item in listed["items"]:
            meta = item["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            try:
                await resource.store.delete(meta.get("namespace"), meta["name"], DeleteOptions())
            except NotFound:
                pass
            except ApiError as e:
                logger.warning("Deleting custom resource failed", extra={"name": meta["name"], "error": str(e)})
        return len((await resource.store.list(None, ListOptions()))["items"])
