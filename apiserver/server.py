"""The API server, assembled in one place: every part handed in, nothing set afterwards.

`assemble` connects to etcd and builds the parts in dependency order: the resource registry
(one generic store per kind, with its REST storages), the watch caches, the authorizer over
their listers, the admission chain, the resource handler and the request pipeline.
`ApiServer.start` runs the watch caches, the compactor and the CRD controller (which serves
custom resources as CustomResourceDefinitions define them), ensures the bootstrap policy,
namespaces and system PriorityClasses, repairs the Service address allocations and starts
reconciling the `kubernetes` Service, and returns once the RBAC authorizer's caches hold the bootstrap policy, so a
component the bootstrap policy authorizes is never refused for a cold cache. `stop` ends
every background task and closes what `assemble` opened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.defaults import default_admission
from apiserver.admission.plugins.priority import SYSTEM_PRIORITY_CLASSES
from apiserver.apiextensions.controller import CRDController
from apiserver.audit import AuditLog
from apiserver.authn import TokenFileAuthenticator, UnionAuthenticator
from apiserver.authn.authenticator import Authenticator
from apiserver.authn.bootstrap_token import BootstrapTokenAuthenticator
from apiserver.authn.serviceaccount import TokenSigner, load_or_generate_key
from apiserver.authn.serviceaccount_validator import ServiceAccountAuthenticator
from apiserver.authz.bootstrap import bootstrap_policy
from apiserver.authz.factory import new_authorizer
from apiserver.config import ApiServerConfig
from apiserver.endpoints.handlers import ResourceHandler
from apiserver.endpoints.oidc import oidc_router
from apiserver.endpoints.routes import build_routes
from apiserver.endpoints.traces import traces_router
from apiserver.endpoints.ui import ui_router
from apiserver.filters import InflightLimiter
from apiserver.metrics import Metrics
from apiserver.pipeline import Receive, RequestPipeline, Scope, Send
from apiserver.registry.builtin import install_builtin
from apiserver.registry.compactor import compact_periodically
from apiserver.registry.generic import RegistryStore
from apiserver.registry.resource_registry import ResourceRegistry, ServedResource
from apiserver.registry.rest import (
    KubeletClient,
    ProxyTransport,
    SelfSubjectAccessReviewStorage,
    SelfSubjectReviewStorage,
    SelfSubjectRulesReviewStorage,
    SubjectAccessReviewStorage,
)
from apiserver.registry.rest import Storage as RestStorage
from apiserver.registry.service.allocation import new_service_allocators
from apiserver.registry.service.kubernetes_service import KubernetesServiceReconciler, default_advertise_address
from apiserver.registry.service.repair import ServiceRangeRepair
from apiserver.registry.watch_cache import WatchCache
from apiserver.storage import Etcd3Storage, EtcdTLSConfig
from apiserver.storage.encryption_config import load_encryption_config
from apiserver.storage.interface import Storage
from apiserver.storage.transforming import TransformingStorage
from apiserver.tracing import SpanStore, StoreSpanExporter
from kube.errors import ApiError
from kube.resources import RESOURCES, VIRTUAL_KINDS, ResourceInfo

__all__ = ["ApiServer", "assemble"]

logger = logging.getLogger(__name__)

_SYSTEM_PRIORITY_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary.",
}


_KUBERNETES_SERVICE_INTERVAL = 10.0  # seconds between reconciles of the kubernetes Service and endpoints


def _system_priority_classes() -> list[dict[str, Any]]:
    """The built-in PriorityClasses kube-apiserver creates at start (scheduling's bootstrap hook)."""
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value, "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority",
             "description": _SYSTEM_PRIORITY_CLASS_DESCRIPTIONS[name]}
            for name, value in SYSTEM_PRIORITY_CLASSES.items()]


class ApiServer:
    """The running API server: an ASGI app over its parts, with a start and a stop."""

    def __init__(self, *, config: ApiServerConfig, storage: Storage, owns_storage: bool, registry: ResourceRegistry,
                 caches: list[WatchCache], pipeline: RequestPipeline, kubelet: KubeletClient,
                 proxy_transport: ProxyTransport,
                 crd_controller: CRDController, service_repair: ServiceRangeRepair,
                 kubernetes_service: KubernetesServiceReconciler) -> None:
        self.config, self.storage, self.owns_storage = config, storage, owns_storage
        self.service_repair, self.kubernetes_service = service_repair, kubernetes_service
        self.crd_controller = crd_controller
        self.registry, self.caches, self.pipeline = registry, caches, pipeline
        self.kubelet, self.proxy_transport = kubelet, proxy_transport
        self._tasks: list[asyncio.Task[Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.pipeline(scope, receive, send)

    async def start(self) -> None:
        for cache in self.caches:
            self._tasks.append(asyncio.create_task(cache.run(), name=f"watch-cache-{cache.prefix}"))
        if self.config.etcd_compaction_interval > 0:
            self._tasks.append(asyncio.create_task(
                compact_periodically(self.storage, self.config.etcd_compaction_interval), name="etcd-compactor"))
        self._tasks.append(asyncio.create_task(self.crd_controller.run(), name="crd-controller"))
        await self._bootstrap()
        await self.service_repair.run_once()  # before any Service write can take an address
        self._tasks.append(asyncio.create_task(self.service_repair.run(self.config.service_repair_interval),
                                               name="service-repair"))
        self._tasks.append(asyncio.create_task(self.kubernetes_service.run(_KUBERNETES_SERVICE_INTERVAL),
                                               name="kubernetes-service"))
        await self._wait_for_policy_in_cache()
        logger.info("API server ready", extra={"port": self.config.port,
                                               "etcd": ",".join(self.config.etcd_endpoints)})

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.kubelet.close()
        await self.proxy_transport.close()
        if self.owns_storage:
            await self.storage.close()

    async def _bootstrap(self) -> None:
        """The bootstrap RBAC policy, namespaces and system PriorityClasses; what exists is left as it is."""
        wanted: list[tuple[RegistryStore, dict[str, Any]]] = [
            (self._store(plural), obj) for plural, obj in bootstrap_policy()]
        namespaces = self.registry.store("namespaces")
        wanted += [(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
                   for name in self.config.bootstrap_namespaces]
        wanted += [(self._store("priorityclasses"), pc) for pc in _system_priority_classes()]
        for store, obj in wanted:
            manager = "rbac-bootstrap" if obj["apiVersion"].startswith("rbac.") else None
            try:
                await store.create(obj["metadata"].get("namespace"), obj, manager=manager)
            except ApiError as e:
                if e.code != 409:
                    raise

    def _store(self, plural: str) -> RegistryStore:
        return next(s.store for s in self.registry if s.info.plural == plural and s.store is not None)

    async def _wait_for_policy_in_cache(self, timeout: float = 10.0) -> None:
        if not self.config.watch_cache:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        wanted = [(self._store(plural).lister(), obj["metadata"]) for plural, obj in bootstrap_policy()]
        while loop.time() < deadline:
            if all(lister.get(meta.get("namespace"), meta["name"]) is not None for lister, meta in wanted):
                return
            await asyncio.sleep(0.02)
        logger.warning("Bootstrap policy not seen in the cache yet", extra={"timeout": timeout})


def _authenticator(config: ApiServerConfig, signer: TokenSigner, registry: ResourceRegistry) -> Authenticator:
    authenticators: list[Authenticator] = []
    if config.token_auth_file:
        authenticators.append(TokenFileAuthenticator.from_file(config.token_auth_file))
    service_accounts, nodes = registry.lister("serviceaccounts"), registry.lister("nodes")
    if config.enable_bootstrap_token_auth:
        authenticators.append(BootstrapTokenAuthenticator(registry.lister("secrets").get))
    authenticators.append(ServiceAccountAuthenticator(
        signer, service_accounts.get, pod_lookup=registry.lister("pods").get,
        secret_lookup=registry.lister("secrets").get, node_lookup=lambda name: nodes.get(None, name)))
    return UnionAuthenticator(*authenticators)


def _path(path: Any) -> str | None:
    return str(path) if path else None


async def assemble(config: ApiServerConfig, *, storage: Storage | None = None,
                   admission_plugins: Iterable[object] = (), own_spans: StoreSpanExporter | None = None) -> ApiServer:
    """Connect (unless `storage` is handed in) and build every part; `admission_plugins` join the default chain."""
    etcd_tls = EtcdTLSConfig(ca_file=config.etcd_cafile, cert_file=config.etcd_certfile, key_file=config.etcd_keyfile)
    store = storage or await Etcd3Storage.connect(list(config.etcd_endpoints), startup_timeout=30.0, tls=etcd_tls)
    if config.encryption_provider_config is not None:
        encryption = load_encryption_config(config.encryption_provider_config)
        store = TransformingStorage(store, encryption.key_prefixes(config.etcd_prefix, RESOURCES))
    signer = TokenSigner(load_or_generate_key(_path(config.service_account_signing_key_file)),
                         issuer=config.service_account_issuer, audiences=config.api_audiences)
    registry = ResourceRegistry()
    # Kubelets are reached with the API server's client certificate, checking theirs against the CA.
    kubelet = KubeletClient(client_cert=_path(config.kubelet_client_certificate),
                            client_key=_path(config.kubelet_client_key),
                            ca_file=_path(config.kubelet_certificate_authority or config.client_ca_file))
    proxy_transport = ProxyTransport()
    allocators = new_service_allocators(store, prefix=config.etcd_prefix,
                                        cluster_ip_range=config.service_cluster_ip_range,
                                        node_port_range=config.service_node_port_range)
    install_builtin(registry, store, prefix=config.etcd_prefix, max_object_bytes=config.max_object_bytes,
                    token_issuer=signer, kubelet=kubelet, proxy_transport=proxy_transport,
                    service_allocators=allocators,
                    extend_token_expiration=config.service_account_extend_token_expiration)
    caches: list[WatchCache] = []
    if config.watch_cache:
        for served in registry:
            if served.store is not None:
                cache = WatchCache(store, served.store.prefix(None), served.store.decode)
                served.store.enable_watch_cache(cache)
                caches.append(cache)
    authorizer = new_authorizer(config.authorization_mode, registry)
    reviews: dict[str, Callable[[ResourceInfo], RestStorage]] = {
        "SelfSubjectAccessReview": lambda _: SelfSubjectAccessReviewStorage(authorizer),
        "SubjectAccessReview": lambda _: SubjectAccessReviewStorage(authorizer),
        "SelfSubjectRulesReview": lambda _: SelfSubjectRulesReviewStorage(authorizer),
        "SelfSubjectReview": lambda info: SelfSubjectReviewStorage(info.version)}
    for info in RESOURCES:
        if info.kind in VIRTUAL_KINDS:
            registry.add(ServedResource(info, reviews[info.kind](info)))
    admission: AdmissionChain = default_admission(registry, admission_plugins,
                                                  disabled=config.disable_admission_plugins, authorizer=authorizer)
    metrics = Metrics()
    handler = ResourceHandler(registry, admission, max_request_bytes=config.max_request_bytes,
                              min_request_timeout=config.min_request_timeout)
    server_address = f"{config.bind_address}:{config.port}"

    async def ready() -> bool:
        """etcd answers and every watch cache is filled."""
        return all(c.is_ready() for c in caches) and await store.healthy()

    routes = build_routes(registry=registry, metrics=metrics, ready=ready, server_address=server_address)
    routes.include_router(oidc_router(signer))
    spans = SpanStore(config.trace_store_path, max_age=config.trace_retention_seconds,
                      max_spans=config.trace_max_spans)
    if own_spans is not None:
        own_spans.attach(spans)
    routes.include_router(traces_router(spans))
    routes.include_router(ui_router(spans))
    audit = AuditLog(config.audit_log_path) if config.audit_log_path else None
    limiter = InflightLimiter(max_requests_inflight=config.max_requests_inflight,
                              max_mutating_requests_inflight=config.max_mutating_requests_inflight,
                              max_long_running_per_user=config.max_long_running_requests_per_user, metrics=metrics)
    pipeline = RequestPipeline(routes=routes, handler=handler, authenticator=_authenticator(config, signer, registry),
                               authorizer=authorizer, metrics=metrics, limiter=limiter,
                               request_timeout=config.request_timeout, audit=audit)
    server = ApiServer(config=config, storage=store, owns_storage=storage is None, registry=registry, caches=caches,
                       pipeline=pipeline, kubelet=kubelet, proxy_transport=proxy_transport,
                       crd_controller=CRDController(crds=registry.store("customresourcedefinitions",
                                                                        "apiextensions.k8s.io"),
                                                    registry=registry, storage=store, prefix=config.etcd_prefix,
                                                    max_object_bytes=config.max_object_bytes,
                                                    watch_cache=config.watch_cache),
                       service_repair=ServiceRangeRepair(allocators=allocators, services=registry.store("services"),
                                                         grace=config.service_repair_interval),
                       kubernetes_service=KubernetesServiceReconciler(
                           services=registry.store("services"), endpoints=registry.store("endpoints"),
                           slices=registry.store("endpointslices", "discovery.k8s.io"),
                           cluster_ip=allocators.ip_range.ip(0),
                           address=config.advertise_address or default_advertise_address(config.bind_address),
                           port=config.advertise_port or config.port))
    return server
