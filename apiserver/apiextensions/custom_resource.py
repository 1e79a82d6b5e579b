"""Custom resources: the store, strategy and scale subresource of one served CRD version.

Mirrors apiextensions-apiserver's `pkg/registry/customresource`. Every served version of a
CRD gets its own `CustomResourceStore`, all over the same etcd prefix
(`/registry/<group>/<plural>/`, as upstream keys them): objects are written with the storage
version's apiVersion and read back with the serving version's (conversion strategy None,
the only one served here). The strategy:
- validates metadata and the version's structural schema, every error in one 422;
- applies the schema's defaults on create and update;
- with the status subresource, ignores status on the main resource (and clears it on
  create) and everything but status on /status; generation counts changes to anything but
  metadata and status (without it, to anything but metadata).
The scale subresource reads and writes the paths the CRD names (`specReplicasPath`, ...).
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.apiextensions import cel, structural
from apiserver.registry.generic import RegistryStore
from apiserver.registry.rest.interfaces import Context, Kind, Obj, UpdateFunc
from apiserver.registry.strategy import Strategy, validate_object_meta
from apiserver.storage.interface import Storage
from apiserver.validation.field import invalid
from kube.errors import BadRequest, FieldError, Invalid
from kube.resources import ResourceInfo

__all__ = ["CustomResourceStrategy", "CustomResourceStore", "CustomScaleStorage"]


class CustomResourceStrategy(Strategy):
    """A custom kind's rules: its schema, its defaults, and its status subresource if enabled."""

    tracks_generation = True

    def __init__(self, info: ResourceInfo, *, schema: dict[str, Any], status_enabled: bool) -> None:
        super().__init__(info)
        self.openapi_schema, self.status_enabled = schema, status_enabled

    def prepare_for_create(self, obj: Obj) -> None:
        if self.status_enabled:
            obj.pop("status", None)
        structural.default(obj, self.openapi_schema)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource == "status":
            status = new.get("status")
            rv = (new.get("metadata") or {}).get("resourceVersion")
            new.clear()
            new.update(copy.deepcopy(old))
            if status is not None:
                new["status"] = status
            else:
                new.pop("status", None)
            new["metadata"]["resourceVersion"] = rv
        elif self.status_enabled:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        structural.default(new, self.openapi_schema)
        gen = int((old.get("metadata") or {}).get("generation") or 1)
        if self.spec_of(new) != self.spec_of(old):
            gen += 1
        new["metadata"]["generation"] = gen

    def spec_of(self, obj: Obj) -> Any:
        skipped = ("metadata", "status") if self.status_enabled else ("metadata",)
        return {k: v for k, v in obj.items() if k not in skipped}

    def validate(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=self.info.namespaced) + \
            structural.validate(obj, self.openapi_schema) + cel.validate(obj, self.openapi_schema)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_object_meta(new, namespaced=self.info.namespaced) + \
            structural.validate(new, self.openapi_schema) + cel.validate(new, self.openapi_schema, old)


class CustomResourceStore(RegistryStore):
    """A RegistryStore for one served version of a CRD, sharing the CRD's etcd prefix with its other versions."""

    def __init__(self, storage: Storage, info: ResourceInfo, strategy: CustomResourceStrategy, *, prefix: str,
                 storage_version: str, max_object_bytes: int = 1536 * 1024) -> None:
        super().__init__(storage, info, strategy, prefix=prefix, max_object_bytes=max_object_bytes)
        self.root = f"{prefix.rstrip('/')}/{info.group}/{info.plural}/"
        self.storage_api_version = f"{info.group}/{storage_version}"

    def decode(self, value: bytes, revision: int) -> Obj:
        obj = super().decode(value, revision)
        obj["apiVersion"] = self.info.api_version
        return obj

    def encode(self, obj: Obj) -> bytes:
        stored = dict(obj)
        stored["apiVersion"] = self.storage_api_version
        return super().encode(stored)

    def invalid(self, name: str, errs: list[Any]) -> Invalid:
        summary = ", ".join(str(e) for e in errs)
        kind = f"{self.info.kind}.{self.info.group}"
        return Invalid(f'{kind} "{name}" is invalid: {summary}' if len(errs) == 1 else
                       f'{kind} "{name}" is invalid: [{summary}]',
                       details={"name": name, "group": self.info.group, "kind": self.info.kind,
                                "causes": [e.cause() for e in errs]})


def _get_path(obj: Any, path: str) -> Any:
    for part in [p for p in path.strip(".").split(".") if p]:
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = [p for p in path.strip(".").split(".") if p]
    for part in parts[:-1]:
        child = obj.get(part)
        if not isinstance(child, dict):
            child = obj[part] = {}
        obj = child
    obj[parts[-1]] = value


class CustomScaleStorage:
    """autoscaling/v1 Scale over a custom resource, at the paths its CRD's scale subresource names."""

    kind = Kind("autoscaling", "v1", "Scale")

    def __init__(self, store: RegistryStore, *, spec_path: str, status_path: str, selector_path: str | None) -> None:
        self.store, self.spec_path, self.status_path, self.selector_path = store, spec_path, status_path, selector_path

    def as_scale(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        status: Obj = {"replicas": _get_path(obj, self.status_path) or 0}
        if self.selector_path and isinstance(selector := _get_path(obj, self.selector_path), str):
            status["selector"] = selector
        return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                             if k in meta},
                "spec": {"replicas": _get_path(obj, self.spec_path) or 0}, "status": status}

    async def get(self, ctx: Context, name: str) -> Obj:
        return self.as_scale(await self.store.get(ctx.namespace, name))

    async def update(self, ctx: Context, name: str, transform: UpdateFunc, *,
                     allow_create: bool = False) -> tuple[Obj, bool]:
        def rescale(obj: Obj) -> Obj:
            wanted = transform(self.as_scale(obj))
            if not isinstance(wanted, dict):
                raise BadRequest("the request body must be a Scale object")
            replicas = (wanted.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                err = invalid("spec.replicas", replicas, "must be greater than or equal to 0")
                raise Invalid(f'Scale.autoscaling "{name}" is invalid: {err}',
                              details={"name": name, "group": "autoscaling", "kind": "Scale",
                                       "causes": [err.cause()]})
            _set_path(obj, self.spec_path, replicas)
            rv = (wanted.get("metadata") or {}).get("resourceVersion")
            obj["metadata"]["resourceVersion"] = rv or obj["metadata"]["resourceVersion"]
            return obj

        updated = await self.store.patch(ctx.namespace, name, rescale, subresource="scale", dry_run=ctx.dry_run,
                                         manager=ctx.field_manager, admission=ctx.admission)
        return self.as_scale(updated), False
