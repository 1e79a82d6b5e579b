"""The REST handlers for every served resource: thin adapters from HTTP to the registry.

One handler serves every `/api/...` and `/apis/...` resource path: it parses the path,
decodes the body and query into registry calls, and encodes the answer. Semantics live in
`apiserver.registry`; what is special to one subresource (binding) lives beside it here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from kube.errors import (ApiError, BadRequest, Conflict, Forbidden, MethodNotAllowed, NotFound, RequestEntityTooLarge,
                         UnsupportedMediaType)
from kube.resources import VIRTUAL_KINDS
from kube.selectors import parse_field_selector, parse_label_selector
from apiserver.admission import QuotaAdmission, admit_pod, node_restriction
from apiserver.authn import UserInfo
from apiserver.authz import Attributes, Decision, forbidden_message, verb_for
from apiserver.endpoints.paths import ResourcePath, parse_resource_path
from apiserver.endpoints.tables import to_table, wants_table
from apiserver.fieldmanager import apply_config, manager_from_user_agent
from apiserver.openapi.schema import node_for_gvk, prune_unknown_fields, type_errors
from apiserver.registry.generic import DeleteOptions, ListOptions, RegistryStore, now_rfc3339
from apiserver.registry.patch import PatchError, json_patch, merge_patch, strategic_merge_patch

__all__ = ["ResourceHandler", "json_response"]

logger = logging.getLogger(__name__)

_PATCHERS = {
    "application/merge-patch+json": merge_patch,
    "application/strategic-merge-patch+json": strategic_merge_patch,
    "application/json-patch+json": json_patch,
}


IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def json_response(body: Any, status_code: int = 200, *, warnings: list[str] | None = None) -> Response:
    # Header values travel as bytes; field names may be any Unicode, so send their UTF-8 as is.
    headers = {"Warning": ", ".join(f'299 - "{w}"' for w in warnings).encode().decode("latin-1")} \
        if warnings else None
    return Response(json.dumps(body, separators=(",", ":")), status_code=status_code, media_type="application/json",
                    headers=headers)


def _field_validation(request: Request) -> str:
    value = request.query_params.get("fieldValidation") or "Warn"
    if value not in ("Strict", "Warn", "Ignore"):
        raise BadRequest(f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", "Strict", '
                         f'"Warn"')
    return value


def check_unknown_fields(request: Request, path: ResourcePath, obj: dict[str, Any]) -> list[str]:
    """Prune fields the kind does not declare; 400 for them under Strict, warnings under Warn."""
    info = path.info
    node = node_for_gvk(info.group, info.version, "Binding" if path.subresource == "binding" else info.kind)
    if node is None:
        return []
    errors = type_errors(obj, node)
    if errors:
        raise BadRequest(f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {errors[0]}')
    mode = _field_validation(request)
    unknown = prune_unknown_fields(obj, node)
    if not unknown or mode == "Ignore":
        return []
    messages = [f'unknown field "{u}"' for u in unknown]
    if mode == "Strict":
        raise BadRequest(f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                         f"strict decoding error: {', '.join(messages)}")
    return [m.replace('"', '\\"') for m in messages]


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"invalid value for {name}: {raw!r}") from None


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "t", "yes")


def _manager(request: Request) -> str:
    return request.query_params.get("fieldManager") or manager_from_user_agent(request.headers.get("user-agent", ""))


def _dry_run(request: Request) -> bool:
    values = request.query_params.getlist("dryRun")
    for v in values:
        if v != "All":
            raise BadRequest(f'Invalid dryRun value {v!r}: valid values are "All"')
    return bool(values)


class ResourceHandler:
    """Dispatches resource requests to the registry stores."""

    def __init__(self, stores: dict[str, RegistryStore], *, max_request_bytes: int, min_request_timeout: int) -> None:
        self.stores = stores
        self.quota = QuotaAdmission(stores)
        self.logs: Any = None  # PodLogs, set by the app
        self.authorizer: Any = None  # an Authorizer, set by the app; None allows everything
        self.token_signer: Any = None  # a TokenSigner, set by the app
        self.max_request_bytes = max_request_bytes
        self.min_request_timeout = min_request_timeout

    def store(self, path: ResourcePath) -> RegistryStore:
        return self.stores[path.info.plural]

    async def raw_body(self, request: Request) -> bytes:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > self.max_request_bytes:
            raise RequestEntityTooLarge("the request body is too large")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > self.max_request_bytes:
                raise RequestEntityTooLarge("the request body is too large")
        return raw

    async def body(self, request: Request) -> Any:
        content_type = request.headers.get("content-type", "").split(";")[0].strip()
        if content_type and not (content_type == "application/json" or content_type.endswith("+json")
                                 or content_type in ("application/yaml", "text/plain", "*/*")):
            raise UnsupportedMediaType(f'the body of the request was in an unknown format - accepted media types '
                                       f'include: application/json, application/yaml')
        raw = await self.raw_body(request)
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise BadRequest(f"the request body is not valid JSON: {e}") from None

    async def object_body(self, request: Request, path: ResourcePath) -> dict[str, Any]:
        body = await self.body(request)
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        expected_kind = "Binding" if path.subresource == "binding" else path.info.kind
        expected_api = "v1" if path.subresource == "binding" else path.info.api_version
        if body.get("kind") not in (None, "", expected_kind) or body.get("apiVersion") not in (None, "", expected_api):
            raise BadRequest(f"the API version in the data ({body.get('apiVersion')}) does not match the expected "
                             f"API version ({expected_api})" if body.get("apiVersion") not in (None, "", expected_api)
                             else f"the kind in the data ({body.get('kind')}) does not match the expected kind "
                                  f"({expected_kind})")
        body["kind"], body["apiVersion"] = expected_kind, expected_api
        meta = body.get("metadata")
        if meta is None:
            body["metadata"] = meta = {}
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        ns = meta.get("namespace")
        if path.info.namespaced and path.namespace and ns not in (None, "", path.namespace):
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        return body

    def list_options(self, request: Request) -> ListOptions:
        q = request.query_params
        try:
            labels = parse_label_selector(q.get("labelSelector"))
            fields = parse_field_selector(q.get("fieldSelector"))
        except ValueError as e:
            raise BadRequest(str(e)) from None
        return ListOptions(label_selector=labels, field_selector=fields, limit=_int_param(request, "limit") or 0,
                           continue_token=q.get("continue") or None, resource_version=q.get("resourceVersion"))

    async def handle(self, request: Request, group: str, version: str, rest: str) -> Response:
        path = parse_resource_path(group, version, [p for p in rest.split("/") if p])
        if path.info.namespaced and path.name is not None and path.namespace is None:
            raise NotFound("the server could not find the requested resource")
        method = request.method
        self.authorize(request, path)
        if path.info.kind in VIRTUAL_KINDS:
            if method != "POST" or path.name is not None:
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self.review(request, path)
        if path.name is None:
            if method == "GET":
                if _truthy(request.query_params.get("watch")):
                    return await self.watch(request, path)
                listed = await self.store(path).list(path.namespace, self.list_options(request))
                return self.render_list(request, path, listed)
            if method == "POST":
                return await self.create(request, path)
            if method == "DELETE":
                return await self.delete_collection(request, path)
            raise MethodNotAllowed(f"the server does not allow this method on the requested resource")
        if path.subresource == "token":
            if method != "POST":
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self.token_request(request, path)
        if path.subresource == "eviction":
            if method != "POST":
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self.evict(request, path)
        if path.subresource == "binding":
            if method != "POST":
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self.bind(request, path)
        if path.subresource == "scale":
            return await self.scale(request, path)
        if path.subresource == "log":
            if method != "GET" or self.logs is None:
                raise MethodNotAllowed("the server does not allow this method on the requested resource")
            return await self.logs.handle(request, str(path.namespace), path.name)
        if path.subresource == "finalize" and method != "PUT":
            raise MethodNotAllowed(f"the server does not allow this method on the requested resource "
                                   f"({path.subresource})")
        store = self.store(path)
        if method == "GET":
            obj = await store.get(path.namespace, path.name)
            if wants_table(request.headers.get("accept", "")) and path.subresource is None:
                return json_response(to_table(path.info.kind, [obj], list_meta={
                    "resourceVersion": obj["metadata"].get("resourceVersion")},
                    include_object=request.query_params.get("includeObject", "Metadata")))
            return json_response(obj)
        if method == "PUT":
            body = await self.object_body(request, path)
            warnings = check_unknown_fields(request, path, body)
            return json_response(await store.update(path.namespace, path.name, body, subresource=path.subresource,
                                                    dry_run=_dry_run(request), manager=_manager(request)),
                                 warnings=warnings)
        if method == "PATCH":
            return await self.patch(request, path)
        if method == "DELETE" and path.subresource is None:
            if path.info.plural == "namespaces" and path.name in IMMORTAL_NAMESPACES:
                # NamespaceLifecycle: the namespaces the system itself lives in stay.
                raise Forbidden(f'namespaces "{path.name}" is forbidden: this namespace may not be deleted',
                                details={"name": path.name, "kind": "namespaces"})
            return json_response(await store.delete(path.namespace, path.name, await self.delete_options(request)))
        raise MethodNotAllowed("the server does not allow this method on the requested resource")

    def render_list(self, request: Request, path: ResourcePath, listed: dict[str, Any]) -> Response:
        if wants_table(request.headers.get("accept", "")):
            return json_response(to_table(path.info.kind, listed["items"], list_meta=listed["metadata"],
                                          include_object=request.query_params.get("includeObject", "Metadata")))
        return json_response(listed)

    async def scale(self, request: Request, path: ResourcePath) -> Response:
        """The autoscaling/v1 Scale view of a workload: reads and writes spec.replicas only."""
        store = self.store(path)
        assert path.name is not None

        def as_scale(obj: dict[str, Any]) -> dict[str, Any]:
            meta = obj["metadata"]
            spec, status = obj.get("spec") or {}, obj.get("status") or {}
            from kube.selectors import format_label_selector, selector_from_label_selector
            return {"kind": "Scale", "apiVersion": "autoscaling/v1",
                    "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                                      "creationTimestamp") if k in meta},
                    "spec": {"replicas": spec.get("replicas", 1)},
                    "status": {"replicas": status.get("replicas") or 0,
                               "selector": format_label_selector(selector_from_label_selector(spec.get("selector")))}}

        if request.method == "GET":
            return json_response(as_scale(await store.get(path.namespace, path.name)))
        if request.method not in ("PUT", "PATCH"):
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        body = await self.body(request)
        content_type = request.headers.get("content-type", "application/json").split(";")[0].strip()

        def rescale(obj: dict[str, Any]) -> dict[str, Any]:
            current = as_scale(obj)
            if request.method == "PUT":
                wanted = body
            else:
                patcher = _PATCHERS.get(content_type)
                if patcher is None:
                    raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media "
                                               f"types include: {', '.join(_PATCHERS)}")
                try:
                    wanted = patcher(current, body)
                except PatchError as e:
                    raise BadRequest(str(e)) from None
            if not isinstance(wanted, dict):
                raise BadRequest("the request body must be a Scale object")
            replicas = (wanted.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or replicas < 0:
                from kube.errors import Invalid
                raise Invalid(f'Scale.autoscaling "{path.name}" is invalid: spec.replicas: Invalid value: '
                              f"{replicas}: must be greater than or equal to 0",
                              details={"name": path.name, "group": "autoscaling", "kind": "Scale",
                                       "causes": [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                                   "message": "must be greater than or equal to 0"}]})
            rv = (wanted.get("metadata") or {}).get("resourceVersion")
            obj.setdefault("spec", {})["replicas"] = replicas
            obj["metadata"]["resourceVersion"] = rv or obj["metadata"]["resourceVersion"]
            return obj

        updated = await store.patch(path.namespace, path.name, rescale, dry_run=_dry_run(request),
                                    manager=_manager(request))
        return json_response(as_scale(updated))

    def user(self, request: Request) -> UserInfo:
        user = request.scope.get("state", {}).get("user")
        return user if user is not None else UserInfo("system:anonymous", groups=("system:unauthenticated",))

    def attributes(self, request: Request, path: ResourcePath, user: UserInfo) -> Attributes:
        return Attributes(user=user, verb=verb_for(request.method, named=path.name is not None,
                                                   watch=_truthy(request.query_params.get("watch"))),
                          api_group=path.info.group, api_version=path.info.version, resource=path.info.plural,
                          subresource=path.subresource or "", namespace=path.namespace or "", name=path.name or "",
                          path=request.url.path)

    def authorize(self, request: Request, path: ResourcePath) -> None:
        """403 Forbidden, in Kubernetes' words, unless an authorizer allows the request."""
        if self.authorizer is None:
            return
        attrs = self.attributes(request, path, self.user(request))
        decision, reason = self.authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise Forbidden(forbidden_message(attrs, reason),
                            details={"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource})

    async def token_request(self, request: Request, path: ResourcePath) -> Response:
        """serviceaccounts/<name>/token: a signed token for that account (authentication.k8s.io/v1)."""
        body = await self.body(request) or {}
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a TokenRequest")
        spec = body.get("spec") or {}
        expiration = spec.get("expirationSeconds") or 3600
        if not isinstance(expiration, int) or expiration < 600:
            raise ApiError("TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid "
                           "value: may not specify a duration less than 10 minutes", reason="Invalid", code=422)
        expiration = min(expiration, 48 * 3600)
        audiences = spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"]
        sa = await self.stores["serviceaccounts"].get(path.namespace, str(path.name))
        token, exp = self.token_signer.issue(namespace=str(path.namespace), name=str(path.name),
                                             uid=sa["metadata"]["uid"], audiences=list(audiences),
                                             expiration_seconds=expiration)
        import datetime as _dt
        return json_response({
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": path.name, "namespace": path.namespace, "creationTimestamp": None},
            "spec": {"audiences": list(audiences), "expirationSeconds": expiration, "boundObjectRef": None},
            "status": {"token": token, "expirationTimestamp": _dt.datetime.fromtimestamp(
                exp, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}}, 201)

    async def evict(self, request: Request, path: ResourcePath) -> Response:
        """pods/<name>/eviction: delete the pod as an Eviction asks (no disruption budgets are served)."""
        body = await self.body(request) or {}
        opts = (body.get("deleteOptions") or {}) if isinstance(body, dict) else {}
        pre = opts.get("preconditions") or {}
        await self.stores["pods"].delete(path.namespace, str(path.name), DeleteOptions(
            grace_period_seconds=opts.get("gracePeriodSeconds"), propagation_policy=opts.get("propagationPolicy"),
            precondition_uid=pre.get("uid"), precondition_resource_version=pre.get("resourceVersion")))
        return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "code": 201}, 201)

    async def review(self, request: Request, path: ResourcePath) -> Response:
        """SelfSubjectAccessReview: may the caller do what spec.resourceAttributes describes?"""
        body = await self.object_body(request, path)
        spec = body.get("spec") or {}
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        user = self.user(request)
        if isinstance(ra, dict):
            attrs = Attributes(user=user, verb=str(ra.get("verb") or ""), api_group=str(ra.get("group") or ""),
                               resource=str(ra.get("resource") or ""), subresource=str(ra.get("subresource") or ""),
                               namespace=str(ra.get("namespace") or ""), name=str(ra.get("name") or ""))
        elif isinstance(nra, dict):
            attrs = Attributes(user=user, verb=str(nra.get("verb") or ""), resource_request=False,
                               path=str(nra.get("path") or ""))
        else:
            raise BadRequest("spec.resourceAttributes or spec.nonResourceAttributes is required")
        if self.authorizer is None:
            decision, reason = Decision.ALLOW, ""
        else:
            decision, reason = self.authorizer.authorize(attrs)
        body["status"] = {"allowed": decision is Decision.ALLOW}
        if decision is Decision.DENY:
            body["status"]["denied"] = True
        if reason:
            body["status"]["reason"] = reason
        body["metadata"].setdefault("creationTimestamp", None)
        return json_response(body, 201)

    async def create(self, request: Request, path: ResourcePath) -> Response:
        body = await self.object_body(request, path)
        namespace = path.namespace
        if path.info.namespaced and namespace is None:
            namespace = body["metadata"].get("namespace") or None
            if namespace is None:
                raise BadRequest("the namespace of the object is required")
        if path.info.namespaced:
            await self.require_namespace(namespace)
        warnings = check_unknown_fields(request, path, body)
        node_restriction(self.user(request), path.info, namespace, body)
        quota: Any = contextlib.nullcontext()
        if path.info.plural == "pods" and not path.subresource and namespace:
            name = str(body["metadata"].get("name") or body["metadata"].get("generateName") or "")
            await admit_pod(name, namespace, body, self.stores)
            if not _dry_run(request):
                quota = self.quota.admit(namespace, name, body)
        async with quota:
            obj = await self.store(path).create(namespace, body, dry_run=_dry_run(request), manager=_manager(request))
        return json_response(obj, 201, warnings=warnings)

    async def require_namespace(self, namespace: str | None) -> None:
        """NotFound unless the namespace exists, Forbidden while it terminates (cache first, then etcd)."""
        ns_store = self.stores["namespaces"]
        cached = ns_store.cache.objects.get(ns_store.key(None, str(namespace))) if ns_store.cache else None
        try:
            ns = cached if cached is not None else await ns_store.get(None, str(namespace))
        except NotFound:
            raise NotFound(f'namespaces "{namespace}" not found',
                           details={"name": namespace, "kind": "namespaces"}) from None
        if (ns.get("status") or {}).get("phase") == "Terminating":
            raise ApiError(f'unable to create new content in namespace {namespace} because it is being terminated',
                           reason="Forbidden", code=403)

    async def patch(self, request: Request, path: ResourcePath) -> Response:
        content_type = request.headers.get("content-type", "application/merge-patch+json").split(";")[0].strip()
        if content_type == "application/apply-patch+yaml":
            return await self.server_side_apply(request, path)
        patcher = _PATCHERS.get(content_type)
        if patcher is None:
            raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                       f"include: {', '.join(_PATCHERS)}")
        patch_doc = await self.body(request)
        if patch_doc is None:
            raise BadRequest("the patch body is empty")
        node = node_for_gvk(path.info.group, path.info.version, path.info.kind)
        warnings: list[str] = []

        def apply(old: dict[str, Any]) -> dict[str, Any]:
            try:
                if patcher is strategic_merge_patch:
                    result = strategic_merge_patch(old, patch_doc, node)
                else:
                    result = patcher(old, patch_doc)
            except PatchError as e:
                raise BadRequest(str(e)) from None
            if not isinstance(result, dict):
                raise BadRequest("the patched object is not a JSON object")
            warnings[:] = check_unknown_fields(request, path, result)
            return result

        assert path.name is not None
        obj = await self.store(path).patch(path.namespace, path.name, apply, subresource=path.subresource,
                                           dry_run=_dry_run(request), manager=_manager(request))
        return json_response(obj, warnings=warnings)

    async def server_side_apply(self, request: Request, path: ResourcePath) -> Response:
        """PATCH with application/apply-patch+yaml: apply the manager's intent; create when missing."""
        import yaml

        manager = request.query_params.get("fieldManager")
        if not manager:
            raise BadRequest("PATCH /apply requires fieldManager to be set")
        raw = await self.raw_body(request)
        try:
            applied = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as e:
            raise BadRequest(f"error decoding YAML: {e}") from None
        if not isinstance(applied, dict):
            raise BadRequest("the applied configuration must be an object")
        info = path.info
        if applied.get("apiVersion") != info.api_version or applied.get("kind") != info.kind:
            raise BadRequest(f"the applied configuration must have apiVersion {info.api_version!r} and kind "
                             f"{info.kind!r}")
        meta = applied.setdefault("metadata", {})
        if not isinstance(meta, dict) or meta.get("name") not in (None, path.name):
            raise BadRequest("the name of the applied configuration does not match the name on the URL")
        meta["name"] = path.name
        if path.info.namespaced:
            meta["namespace"] = path.namespace
        warnings = check_unknown_fields(request, path, applied)
        force = _truthy(request.query_params.get("force"))
        node = node_for_gvk(info.group, info.version, info.kind)
        if node is None:
            raise UnsupportedMediaType("server-side apply is not supported for this resource")
        store, dry = self.store(path), _dry_run(request)
        assert path.name is not None

        def do_apply(live: dict[str, Any] | None) -> dict[str, Any]:
            return apply_config(live, applied, manager=manager, force=force, node=node, api_version=info.api_version,
                                now=now_rfc3339(), qualified=info.qualified)

        try:
            obj = await store.patch(path.namespace, path.name, do_apply, subresource=path.subresource, dry_run=dry,
                                    manager=None)
            return json_response(obj, warnings=warnings)
        except NotFound:
            if path.subresource:
                raise
        if info.namespaced:
            await self.require_namespace(path.namespace)
        created = await store.create(path.namespace, do_apply(None), dry_run=dry, manager=None)
        return json_response(created, 201, warnings=warnings)

    async def delete_options(self, request: Request) -> DeleteOptions:
        body = await self.body(request)
        opts: dict[str, Any] = body if isinstance(body, dict) else {}
        q = request.query_params
        grace = opts.get("gracePeriodSeconds", _int_param(request, "gracePeriodSeconds"))
        policy = opts.get("propagationPolicy") or q.get("propagationPolicy")
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise BadRequest(f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", '
                             f'"Background", "Orphan"')
        pre = opts.get("preconditions") or {}
        dry = bool(opts.get("dryRun")) or _dry_run(request)
        if grace is not None and not isinstance(grace, int):
            raise BadRequest("gracePeriodSeconds must be an integer")
        return DeleteOptions(grace_period_seconds=grace, propagation_policy=policy,
                             precondition_uid=pre.get("uid"), precondition_resource_version=pre.get("resourceVersion"),
                             dry_run=dry)

    async def delete_collection(self, request: Request, path: ResourcePath) -> Response:
        store = self.store(path)
        opts = await self.delete_options(request)
        listed = await store.list(path.namespace, self.list_options(request))
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                await store.delete(meta.get("namespace"), meta["name"], opts)
            except NotFound:
                pass
        return json_response(listed)

    async def bind(self, request: Request, path: ResourcePath) -> Response:
        body = await self.object_body(request, path)
        target = body.get("target") or {}
        node = target.get("name") if isinstance(target, dict) else None
        if not node:
            raise BadRequest("binding target name is required")
        uid = (body.get("metadata") or {}).get("uid")
        assert path.name is not None

        def assign(pod: dict[str, Any]) -> dict[str, Any]:
            meta, spec = pod["metadata"], pod.setdefault("spec", {})
            if uid and meta.get("uid") != uid:
                raise Conflict(f"Operation cannot be fulfilled on pods/binding \"{path.name}\": the UID in the "
                               f"binding does not match the pod's")
            if meta.get("deletionTimestamp"):
                raise Conflict(f'Operation cannot be fulfilled on pods/binding "{path.name}": pod {path.name} is '
                               "being deleted, cannot be assigned to a host")
            if spec.get("nodeName"):
                raise Conflict(f'Operation cannot be fulfilled on pods/binding "{path.name}": pod {path.name} is '
                               f"already assigned to node \"{spec['nodeName']}\"")
            spec["nodeName"] = node
            status = pod.setdefault("status", {})
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                               "lastTransitionTime": now_rfc3339()})
            status["conditions"] = conditions
            return pod

        await self.stores["pods"].patch(path.namespace, path.name, assign, subresource="binding",
                                        dry_run=_dry_run(request), manager=_manager(request))
        return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "code": 201}, 201)

    async def watch(self, request: Request, path: ResourcePath) -> Response:
        """A `?watch=true` stream: newline-delimited JSON events until timeoutSeconds or a disconnect.

        Errors found before streaming (bad selectors) are plain error responses; an expired
        resourceVersion is, as in Kubernetes, a 200 stream with one ERROR event.
        """
        opts = self.list_options(request)
        timeout = _int_param(request, "timeoutSeconds") or self.min_request_timeout
        table_kind = path.info.kind if wants_table(request.headers.get("accept", "")) else None
        include = request.query_params.get("includeObject", "Metadata")
        try:
            events = await self.store(path).open_watch(
                path.namespace, opts, allow_bookmarks=_truthy(request.query_params.get("allowWatchBookmarks")))
        except ApiError as e:
            if e.code != 410:
                raise
            return StreamingResponse(iter([json.dumps({"type": "ERROR", "object": e.status}) + "\n"]),
                                     media_type="application/json")

        def encode(item: Any) -> bytes:
            if isinstance(item, tuple):
                type_, cached = item
                if not table_kind:
                    return cached.line(type_)
                item = {"type": type_, "object": cached.obj}
            if table_kind and item["type"] in ("ADDED", "MODIFIED", "DELETED"):
                obj = item["object"]
                item = {"type": item["type"], "object": to_table(table_kind, [obj], include_object=include, list_meta={
                    "resourceVersion": obj["metadata"].get("resourceVersion")})}
            return (json.dumps(item, separators=(",", ":")) + "\n").encode()

        return StreamingResponse(self._stream(events, timeout, encode), media_type="application/json")

    @staticmethod
    async def _stream(events: Any, timeout: int, encode: Any) -> AsyncIterator[bytes]:
        try:
            async with asyncio.timeout(timeout):
                async for item in events:
                    yield encode(item)
        except TimeoutError:
            return
        except ApiError as e:
            yield (json.dumps({"type": "ERROR", "object": e.status}) + "\n").encode()
        finally:
            await events.aclose()
