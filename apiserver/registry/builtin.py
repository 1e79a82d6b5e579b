"""The built-in resources: one generic store per kind in `kube.resources`, with its subresources.

Which subresources a kind has is the static table's (`ResourceInfo.subresources`); which
storage serves each is decided here, once. Reviews (kinds that are answered, never stored)
are registered by the server after its authorizer exists. `bindings` (the legacy collection
a Binding can be POSTed to, naming its pod) has no store of its own: it binds through the
same storage as pods/binding.
"""

from __future__ import annotations

from apiserver.registry.csr_store import CertificateSigningRequestStore
from apiserver.registry.generic import RegistryStore
from apiserver.registry.kinds import strategy_for
from apiserver.registry.resource_registry import ResourceRegistry, ServedResource
from apiserver.registry.rest import (
    BindingStorage,
    EphemeralContainersStorage,
    EvictionStorage,
    FinalizeStorage,
    KubeletClient,
    LogStorage,
    NodeProxyStorage,
    PodProxyStorage,
    PodStreamStorage,
    ProxyTransport,
    ResourceStorage,
    ScaleStorage,
    ServiceProxyStorage,
    StatusStorage,
    Storage,
    TokenRequestStorage,
)
from apiserver.registry.rest.token import TokenIssuer
from apiserver.registry.service import ServiceStrategy
from apiserver.registry.service.allocation import ServiceAllocators
from apiserver.registry.service.store import ServiceRegistryStore
from apiserver.storage.interface import Storage as KeyValueStorage
from kube.resources import RESOURCES, VIRTUAL_KINDS, ResourceInfo, resource_for_plural

__all__ = ["install_builtin"]

_BOUND_ELSEWHERE = frozenset({"Binding"})
"""Kinds written through another resource's store rather than stored themselves."""


def install_builtin(registry: ResourceRegistry, storage: KeyValueStorage, *, prefix: str, max_object_bytes: int,
                    token_issuer: TokenIssuer, kubelet: KubeletClient, proxy_transport: ProxyTransport,
                    service_allocators: ServiceAllocators | None = None, extend_token_expiration: bool = True) -> None:
    """Register every stored built-in kind in `registry`; Services take addresses from `service_allocators`.

    Subresources that reach kubelets (log, exec, attach, port-forward, nodes/proxy) do so through
    `kubelet`; pods/proxy and services/proxy reach pods through `proxy_transport`.
    """
    def new_store(r: ResourceInfo) -> RegistryStore:
        if r.kind == "Service" and service_allocators is not None:
            strategy = strategy_for(r)
            if isinstance(strategy, ServiceStrategy):
                strategy.cluster_family = service_allocators.ip_range.family
            return ServiceRegistryStore(storage, r, strategy, allocators=service_allocators, prefix=prefix,
                                        max_object_bytes=max_object_bytes)
        if r.kind == "CertificateSigningRequest":
            return CertificateSigningRequestStore(storage, r, strategy_for(r), prefix=prefix,
                                                  max_object_bytes=max_object_bytes)
        return RegistryStore(storage, r, strategy_for(r), prefix=prefix, max_object_bytes=max_object_bytes)

    stores = {r.plural: new_store(r) for r in RESOURCES
              if r.kind not in VIRTUAL_KINDS and r.kind not in _BOUND_ELSEWHERE}
    for store in stores.values():
        subresources: dict[str, Storage] = {}
        for sub in store.info.subresources:
            subresources[sub] = _subresource(sub, store, stores, token_issuer, kubelet, proxy_transport,
                                             extend_token_expiration=extend_token_expiration)
        registry.add(ServedResource(store.info, ResourceStorage(store), subresources, store))
    bindings = resource_for_plural("", "bindings")
    if bindings is not None:
        registry.add(ServedResource(bindings, BindingStorage(stores["pods"])))


def _subresource(name: str, store: RegistryStore, stores: dict[str, RegistryStore], token_issuer: TokenIssuer,
                 kubelet: KubeletClient, proxy_transport: ProxyTransport, *,
                 extend_token_expiration: bool = True) -> Storage:
    if name == "status":
        return StatusStorage(store)
    if name == "finalize":
        return FinalizeStorage(store)
    if name == "approval":
        return StatusStorage(store, "approval")
    if name == "scale":
        return ScaleStorage(store)
    if name == "binding":
        return BindingStorage(store)
    if name == "eviction":
        return EvictionStorage(store, stores.get("poddisruptionbudgets"))
    if name == "ephemeralcontainers":
        return EphemeralContainersStorage(store)
    if name == "log":
        return LogStorage(store, stores["nodes"], kubelet)
    if name in ("exec", "attach", "portforward"):
        return PodStreamStorage(name, store, stores["nodes"], kubelet)  # type: ignore[arg-type]
    if name == "proxy" and store.info.plural == "pods":
        return PodProxyStorage(store, proxy_transport)
    if name == "proxy" and store.info.plural == "services":
        return ServiceProxyStorage(store, stores["endpoints"], proxy_transport)
    if name == "proxy" and store.info.plural == "nodes":
        return NodeProxyStorage(store, kubelet, proxy_transport)
    if name == "token":
        return TokenRequestStorage(store, token_issuer, pods=stores.get("pods"), secrets=stores.get("secrets"),
                                   nodes=stores.get("nodes"), extend_expiration=extend_token_expiration)
    raise ValueError(f"no storage for subresource {store.info.plural}/{name}")
