"""The resource handler: decode, dispatch to the REST storage, encode. Nothing else.

Mirrors apiserver's endpoints/handlers. The pipeline has already authenticated and
authorized the request and parsed it into a `RequestInfo`; this looks the resource up in the
registry, picks the storage of the resource or subresource, and calls the verb the HTTP
method asks for if that storage implements it (405 otherwise). Semantics live in the
storages, the registry and the admission chain; what a new kind or subresource needs is a
storage registered in the resource registry, not a change here.
"""

from __future__ import annotations

from typing import Any

import yaml
from starlette.requests import Request
from starlette.responses import Response

from apiserver.admission.chain import AdmissionChain, RequestAdmission
from apiserver.authn import UserInfo
from apiserver.endpoints import decode, patch, watch
from apiserver.endpoints.bounded import DecodeError
from apiserver.endpoints.decode import BodyReader, check_unknown_fields
from apiserver.endpoints.request_info import RequestInfo
from apiserver.endpoints.responses import json_response, object_response
from apiserver.endpoints.tables import Printer, custom_printer, to_table, wants_table
from apiserver.registry.resource_registry import ResourceRegistry, ServedResource
from apiserver.registry.rest.interfaces import (
    CollectionDeleter,
    Connecter,
    Context,
    Creater,
    Getter,
    GracefulDeleter,
    Kind,
    Lister,
    Storage,
    UpdateFunc,
    Updater,
    Watcher,
)
from kube.errors import ApiError, BadRequest, MethodNotAllowed, NotFound

__all__ = ["ResourceHandler"]

Obj = dict[str, Any]


def _accept(request: Request) -> str:
    return request.headers.get("accept", "")


def _not_found() -> NotFound:
    return NotFound("the server could not find the requested resource", details={})


def _not_allowed() -> MethodNotAllowed:
    return MethodNotAllowed("the server does not allow this method on the requested resource")


def _printer(served: ServedResource) -> Printer | None:
    """A custom resource's own printer (its additionalPrinterColumns); None for built-in kinds."""
    return custom_printer(served.printer_columns) if served.custom else None


class ResourceHandler:
    """Serves every resource request the registry knows."""

    def __init__(self, registry: ResourceRegistry, admission: AdmissionChain, *, max_request_bytes: int,
                 min_request_timeout: int) -> None:
        self.registry, self.admission = registry, admission
        self.bodies = BodyReader(max_request_bytes)
        self.min_request_timeout = min_request_timeout

    def resolve(self, info: RequestInfo) -> tuple[ServedResource, Storage, str | None]:
        """The served resource, the storage of its (sub)resource, and the namespace its objects live in."""
        served = self.registry.lookup(info.api_group, info.api_version, info.resource)
        if served is None or (info.parts and info.subresource != "proxy"):
            raise _not_found()
        rinfo = served.info
        is_namespace = not rinfo.group and rinfo.plural == "namespaces"
        if rinfo.namespaced:
            if info.name and not info.namespace:
                raise _not_found()
            namespace: str | None = info.namespace or None
        else:
            if info.namespace and not is_namespace:
                raise _not_found()
            namespace = None
        storage = served.storage_for(info.subresource)
        if storage is None:
            raise _not_found()
        return served, storage, namespace

    async def handle(self, request: Request, info: RequestInfo, user: UserInfo) -> Response:
        served, storage, namespace = self.resolve(info)
        ctx = Context(user=user, namespace=namespace, admission=RequestAdmission(self.admission, user),
                      dry_run=decode.dry_run(request), field_manager=decode.field_manager(request))
        method = request.method
        if isinstance(storage, Connecter) and method in storage.connect_methods and info.name:
            return await storage.connect(ctx, info.name, request)
        if method == "GET":
            return await self.read(request, info, served, storage, ctx)
        if method == "POST":
            return await self.create(request, info, served, storage, ctx)
        if method in ("PUT", "PATCH") and info.name:
            return await self.update(request, info, served, storage, ctx)
        if method == "DELETE":
            return await self.delete(request, info, storage, ctx)
        raise _not_allowed()

    # --- reads ---------------------------------------------------------------------------
    async def read(self, request: Request, info: RequestInfo, served: ServedResource, storage: Storage,
                   ctx: Context) -> Response:
        table = wants_table(request.headers.get("accept", "")) and not info.subresource
        include = request.query_params.get("includeObject", "Metadata")
        if info.name:
            if not isinstance(storage, Getter):
                raise _not_allowed()
            obj = await storage.get(ctx, info.name)
            if table:
                return json_response(to_table(served.info.kind, [obj], include_object=include, printer=_printer(served),
                                              list_meta={"resourceVersion": obj["metadata"].get("resourceVersion")}))
            return object_response(_accept(request), obj)
        opts = decode.list_options(request)
        if decode.truthy(request.query_params.get("watch")):
            if not isinstance(storage, Watcher):
                raise _not_allowed()
            return await self.watch(request, served, storage, ctx, table, include)
        if not isinstance(storage, Lister):
            raise _not_allowed()
        listed = await storage.list(ctx, opts)
        if table:
            return json_response(to_table(served.info.kind, listed["items"], list_meta=listed["metadata"],
                                          include_object=include, printer=_printer(served)))
        return object_response(_accept(request), listed)

    async def watch(self, request: Request, served: ServedResource, storage: Watcher, ctx: Context, table: bool,
                    include: str) -> Response:
        opts = decode.list_options(request)
        timeout = decode.int_param(request, "timeoutSeconds") or self.min_request_timeout
        try:
            events = await storage.watch(ctx, opts,
                                         allow_bookmarks=decode.truthy(request.query_params.get("allowWatchBookmarks")))
        except ApiError as e:
            if e.code not in watch.STREAMED_ERRORS:
                raise
            return watch.error_stream(e)
        encode = watch.line_encoder(served.info.kind if table else None, include, _printer(served))
        return watch.stream_watch(events, timeout=timeout, encode=encode, watcher=ctx.user.name if ctx.user else "")

    # --- writes --------------------------------------------------------------------------
    async def create(self, request: Request, info: RequestInfo, served: ServedResource, storage: Storage,
                     ctx: Context) -> Response:
        if not isinstance(storage, Creater) or (info.name and not info.subresource):
            raise _not_allowed()
        rinfo = served.info
        body = await self.bodies.object(request, storage.kind, namespace=ctx.namespace,
                                        namespaced=rinfo.namespaced)
        if rinfo.namespaced and ctx.namespace is None:
            namespace = body["metadata"].get("namespace") or None
            if namespace is None:
                raise BadRequest("the namespace of the object is required")
            ctx = Context(user=ctx.user, namespace=namespace, admission=ctx.admission, dry_run=ctx.dry_run,
                          field_manager=ctx.field_manager)
        warnings = check_unknown_fields(request, storage.kind, body)
        created = await storage.create(ctx, info.name or None, body)
        return object_response(_accept(request), created, 201, warnings=warnings)

    async def update(self, request: Request, info: RequestInfo, served: ServedResource, storage: Storage,
                     ctx: Context) -> Response:
        if not isinstance(storage, Updater):
            raise _not_allowed()
        kind: Kind = storage.kind
        warnings: list[str] = []

        def check(obj: Obj) -> None:
            warnings[:] = check_unknown_fields(request, kind, obj)

        media = decode.content_type(request, "application/merge-patch+json")
        allow_create = False
        if request.method == "PUT":
            body = await self.bodies.object(request, kind, namespace=ctx.namespace,
                                            namespaced=served.info.namespaced)
            transform = patch.replace(body, check)
        elif media == patch.APPLY_PATCH:
            transform, warnings = await self.apply(request, info, served, ctx)
            allow_create = not info.subresource
            ctx = Context(user=ctx.user, namespace=ctx.namespace, admission=ctx.admission, dry_run=ctx.dry_run,
                          field_manager=None)
        else:
            transform = patch.patch(media, await self.bodies.document(request), kind, check)
        obj, created = await storage.update(ctx, info.name, transform, allow_create=allow_create)
        return object_response(_accept(request), obj, 201 if created else 200, warnings=warnings)

    async def apply(self, request: Request, info: RequestInfo, served: ServedResource,
                    ctx: Context) -> tuple[UpdateFunc, list[str]]:
        manager = request.query_params.get("fieldManager")
        if not manager:
            raise BadRequest("PATCH /apply requires fieldManager to be set")
        try:
            document = await self.bodies.yaml(request)
        except (DecodeError, yaml.YAMLError) as e:
            raise BadRequest(f"error decoding YAML: {e}") from None
        applied = patch.parse_applied(document, served.info, name=info.name, namespace=ctx.namespace)
        warnings = check_unknown_fields(request, Kind(served.info.group, served.info.version, served.info.kind),
                                        applied)
        return patch.server_side_apply(applied, served.info, manager=manager,
                                       force=decode.truthy(request.query_params.get("force"))), warnings

    async def delete(self, request: Request, info: RequestInfo, storage: Storage, ctx: Context) -> Response:
        if info.subresource:
            raise _not_allowed()
        opts = await self.bodies.delete_options(request)
        if info.name:
            if not isinstance(storage, GracefulDeleter):
                raise _not_allowed()
            answer, deleted = await storage.delete(ctx, info.name, opts)
            # Upstream answers 202 only for a pending delete that asked orphanDependents=false.
            code = 202 if not deleted and opts.orphan_dependents is False else 200
            return object_response(_accept(request), answer, code)
        if not isinstance(storage, CollectionDeleter):
            raise _not_allowed()
        return object_response(_accept(request), await storage.delete_collection(ctx, opts,
                                                                                 decode.list_options(request)))
