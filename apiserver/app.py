"""build_app(config) -> the API server's ASGI application.

The request pipeline, in order: authenticate (401 unless the path is anonymous), authorize
(everything is allowed to authenticated users until RBAC lands), then the resource handler
(registry: defaulting, validation, storage). Every `ApiError` becomes a `metav1.Status`
body with its code; anything unexpected becomes a 500 Status and is logged. The storage
client is created inside the running loop (grpc.aio channels are bound to it) in the
lifespan, which also creates the bootstrap namespaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, AsyncIterator

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from kube.errors import ApiError, NotAcceptable, NotFound
from kube.resources import RESOURCES
from apiserver.authn import TokenFileAuthenticator, UnionAuthenticator
from apiserver.authn.serviceaccount import ServiceAccountAuthenticator, TokenSigner, load_or_generate_key
from apiserver.audit import AuditLog
from apiserver.authz import Authorizer, Decision, NodeAuthorizer, RBACAuthorizer, UnionAuthorizer
from apiserver.authz.bootstrap import bootstrap_policy
from apiserver.config import ApiServerConfig
from apiserver.endpoints import discovery
from apiserver.endpoints.logs import PodLogs
from apiserver.endpoints.resources import ResourceHandler, json_response
from apiserver.metrics import Metrics
from apiserver.pipeline import RequestPipeline
from apiserver.openapi import documents
from apiserver.registry.generic import RegistryStore
from apiserver.registry.compactor import compact_periodically
from apiserver.registry.kinds import strategy_for
from apiserver.registry.watch_cache import WatchCache
from apiserver.storage import Etcd3Storage
from apiserver.storage.interface import Storage

__all__ = ["build_app"]

logger = logging.getLogger(__name__)


def _status_response(err: ApiError) -> Response:
    return json_response(err.status, err.code)


def _authorizer(config: ApiServerConfig, stores: dict[str, RegistryStore]) -> Authorizer:
    """`--authorization-mode` (Node, RBAC, AlwaysAllow, comma-separated, in order) over the watch caches."""
    def cached(plural: str) -> Any:
        cache = stores[plural].cache
        return cache.objects.values() if cache is not None else ()

    pods = stores["pods"]

    def pods_on_node(node: str) -> Any:
        return [p for p in cached("pods") if (p.get("spec") or {}).get("nodeName") == node]

    def pod(namespace: str, name: str) -> Any:
        return pods.cache.objects.get(pods.key(namespace, name)) if pods.cache is not None else None

    modes = {"Node": lambda: NodeAuthorizer(pods_on_node=pods_on_node, pod=pod),
             "RBAC": lambda: RBACAuthorizer(cached), "AlwaysAllow": lambda: AlwaysAllow()}
    # kube-apiserver puts a privileged-group authorizer first: system:masters is never denied,
    # not even before the bootstrap policy has reached the RBAC authorizer's cache.
    chain: list[Any] = [PrivilegedGroups("system:masters")]
    for mode in config.authorization_mode.split(","):
        if mode.strip() not in modes:
            raise ValueError(f"unknown authorization mode {mode!r}")
        chain.append(modes[mode.strip()]())
    return UnionAuthorizer(*chain)


class PrivilegedGroups:
    """Allows everything to members of the given groups; no opinion on anyone else."""

    def __init__(self, *groups: str) -> None:
        self.groups = frozenset(groups)

    def authorize(self, attrs: Any) -> tuple[Decision, str]:
        if self.groups.intersection(attrs.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class AlwaysAllow:
    def authorize(self, attrs: Any) -> tuple[Decision, str]:
        return Decision.ALLOW, ""


async def _wait_for_policy_in_cache(stores: dict[str, RegistryStore], timeout: float = 10.0) -> None:
    """Return once the RBAC authorizer's caches hold the bootstrap policy (or after `timeout`).

    The lifespan, and so readiness, waits for this: a component whose identity the bootstrap
    policy authorizes must not be refused just because the cache had not seen it yet.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    wanted = [(plural, stores[plural].key(obj["metadata"].get("namespace"), obj["metadata"]["name"]))
              for plural, obj in bootstrap_policy()]
    while asyncio.get_running_loop().time() < deadline:
        missing = [(p, k) for p, k in wanted if stores[p].cache is not None and k not in stores[p].cache.objects]
        if not missing:
            return
        await asyncio.sleep(0.02)
    logger.warning("Bootstrap policy not seen in the cache yet", extra={"timeout": timeout})


async def _bootstrap(stores: dict[str, RegistryStore], config: ApiServerConfig) -> None:
    for plural, obj in bootstrap_policy():
        try:
            await stores[plural].create(None, obj, manager="rbac-bootstrap")
        except ApiError as e:
            if e.code != 409:
                raise
    for name in config.bootstrap_namespaces:
        try:
            await stores["namespaces"].create(None, {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": name}})
            logger.info("Created bootstrap namespace", extra={"namespace": name})
        except ApiError as e:
            if e.code != 409:
                raise


def _s(path: Any) -> str | None:
    return str(path) if path else None


def build_app(config: ApiServerConfig, *, storage: Storage | None = None) -> FastAPI:
    """The ASGI app; connects to etcd on startup unless a storage is handed in."""
    authenticators = []
    if config.token_auth_file:
        authenticators.append(TokenFileAuthenticator.from_file(config.token_auth_file))
    signer = TokenSigner(load_or_generate_key(_s(config.service_account_signing_key_file)))
    sa_lookup: dict[str, Any] = {}

    def service_account(namespace: str, name: str) -> Any:
        store = sa_lookup.get("store")
        if store is None or store.cache is None:
            return None
        return store.cache.objects.get(store.key(namespace, name))

    authenticators.append(ServiceAccountAuthenticator(signer, service_account))
    authn = UnionAuthenticator(*authenticators)
    metrics = Metrics()
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        store = storage or await Etcd3Storage.connect(list(config.etcd_endpoints), startup_timeout=30.0)
        stores = {r.plural: RegistryStore(store, r, strategy_for(r), prefix=config.etcd_prefix,
                                          max_object_bytes=config.max_object_bytes) for r in RESOURCES}
        state["storage"] = store
        sa_lookup["store"] = stores["serviceaccounts"]
        caches = []
        if config.watch_cache:
            for rs in stores.values():
                cache = WatchCache(store, rs.prefix(None), rs.decode)
                rs.enable_watch_cache(cache)
                state.setdefault("caches", []).append(cache)
                caches.append(asyncio.create_task(cache.run(), name=f"watch-cache-{rs.info.plural}"))
        if config.etcd_compaction_interval > 0:
            caches.append(asyncio.create_task(compact_periodically(store, config.etcd_compaction_interval),
                                              name="etcd-compactor"))
        state["handler"] = ResourceHandler(stores, max_request_bytes=config.max_request_bytes,
                                           min_request_timeout=config.min_request_timeout)
        logs = PodLogs(stores["pods"], stores["nodes"], client_cert=_s(config.kubelet_client_certificate),
                       client_key=_s(config.kubelet_client_key),
                       ca_file=_s(config.kubelet_certificate_authority or config.client_ca_file))
        state["handler"].logs = logs
        state["handler"].token_signer = signer
        if config.authorization_mode != "AlwaysAllow":
            state["handler"].authorizer = state["authorizer"] = _authorizer(config, stores)
        await _bootstrap(stores, config)
        await _wait_for_policy_in_cache(stores)
        logger.info("API server ready", extra={"port": config.port, "etcd": ",".join(config.etcd_endpoints)})
        try:
            yield
        finally:
            for task in caches:
                task.cancel()
            await asyncio.gather(*caches, return_exceptions=True)
            await logs.close()
            if storage is None:
                await store.close()

    app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)

    async def api_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return _status_response(exc)

    app.add_exception_handler(ApiError, api_error)

    @app.get("/healthz")
    @app.get("/livez")
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @app.get("/readyz")
    async def readyz() -> Response:
        caches_ready = all(c.is_ready() for c in state.get("caches", []))
        if "storage" in state and caches_ready and await state["storage"].healthy():
            return PlainTextResponse("ok")
        return PlainTextResponse("[-]etcd failed: reason withheld\nreadyz check failed", status_code=500)

    @app.get("/version")
    async def version() -> Response:
        return json_response(discovery.version_info())

    @app.get("/metrics")
    async def metrics_endpoint() -> Response:
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    def _aggregated(request: Request, *, legacy: bool) -> Response | None:
        version = discovery.aggregated_media_type(request.headers.get("accept", ""))
        if version is None:
            return None
        body = discovery.aggregated_discovery(legacy=legacy, version=version)
        media = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
        return Response(json.dumps(body), media_type=media, headers={"Vary": "Accept"})

    @app.get("/api")
    async def api(request: Request) -> Response:
        return _aggregated(request, legacy=True) or json_response(
            discovery.api_versions(f"{config.bind_address}:{config.port}"))

    @app.get("/apis")
    async def apis(request: Request) -> Response:
        return _aggregated(request, legacy=False) or json_response(discovery.api_group_list())

    @app.get("/api/v1")
    async def core_resources() -> Response:
        return json_response(discovery.api_resource_list("", "v1"))

    @app.get("/apis/{group}/{version}")
    async def group_resources(group: str, version: str) -> Response:
        doc = discovery.api_resource_list(group, version)
        if doc is None:
            raise NotFound("the server could not find the requested resource")
        return json_response(doc)

    @app.get("/apis/{group}")
    async def group_doc(group: str) -> Response:
        for g in discovery.api_group_list()["groups"]:
            if g["name"] == group:
                return json_response({"kind": "APIGroup", "apiVersion": "v1", **g})
        raise NotFound("the server could not find the requested resource")

    @app.get("/openapi/v2")
    async def openapi_v2(request: Request) -> Response:
        if "json" not in request.headers.get("accept", "application/json") and "*/*" not in request.headers.get(
                "accept", ""):
            raise NotAcceptable("only application/json is served for /openapi/v2")
        return Response(documents.openapi_v2(), media_type="application/json")

    @app.get("/openapi/v3")
    async def openapi_v3_index() -> Response:
        return json_response(documents.openapi_v3_index())

    @app.get("/openapi/v3/{gv:path}")
    async def openapi_v3(gv: str) -> Response:
        body = documents.openapi_v3_group(gv)
        if body is None:
            raise NotFound("the server could not find the requested resource")
        return Response(body, media_type="application/json", headers={"Cache-Control": "public, immutable"})

    async def resources(scope: Any, receive: Any, send: Any) -> None:
        """Resource paths, served without the framework's routing (the hot path of every component)."""
        request = Request(scope, receive)
        parts = scope["path"].split("/", 4)  # "", "api", "v1", rest  |  "", "apis", group, version, rest
        try:
            if parts[1] == "api":
                response = await state["handler"].handle(request, "", parts[2], "/".join(parts[3:]))
            else:
                response = await state["handler"].handle(request, parts[2], parts[3], parts[4])
        except ApiError as e:
            response = _status_response(e)
        await response(scope, receive, send)

    audit = AuditLog(config.audit_log_path) if config.audit_log_path else None
    return RequestPipeline(app, authenticator=authn, metrics=metrics,  # type: ignore[return-value]
                           resources=resources, authorizer=lambda: state.get("authorizer"), audit=audit)
