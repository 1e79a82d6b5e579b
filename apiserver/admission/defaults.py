"""kube-apiserver's default admission order, for the plugins picokube serves.

NamespaceLifecycle first (it answers for a missing namespace before anyone else speaks),
ResourceQuota last (it counts the object every other plugin has finished with). Plugins
named in `disabled` (`--disable-admission-plugins`) are left out; an unknown name is a
ValueError.
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interfaces import Obj
from apiserver.admission.plugins import (
    CertificateApproval,
    CertificateSigning,
    CertificateSubjectRestriction,
    DefaultStorageClass,
    DefaultTolerationSeconds,
    LimitRanger,
    NamespaceLifecycle,
    NodeRestriction,
    Priority,
    ResourceQuota,
    ServiceAccount,
    StorageObjectInUseProtection,
)
from apiserver.authz import Authorizer
from apiserver.registry.generic import ListOptions
from apiserver.registry.resource_registry import ResourceRegistry

__all__ = ["default_admission"]

_NAMES = tuple(plugin.name for plugin in (NamespaceLifecycle, LimitRanger, ServiceAccount, NodeRestriction, Priority,
                                          DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection,
                                          CertificateApproval, CertificateSigning, CertificateSubjectRestriction,
                                          ResourceQuota))


def default_admission(registry: ResourceRegistry, extra: Iterable[object] = (),
                      disabled: Iterable[str] = (), authorizer: Authorizer | None = None) -> AdmissionChain:
    """The default chain over the registry's stores and listers, with `extra` plugins at the end.

    The certificate plugins, which ask `authorizer` whether a user may approve or sign for a
    signer, join only when there is one.
    """
    off = set(disabled)
    unknown = off - set(_NAMES)
    if unknown:
        raise ValueError(f"unknown admission plugins: {', '.join(sorted(unknown))}")
    namespaces, pods = registry.store("namespaces"), registry.store("pods")
    service_accounts = registry.store("serviceaccounts")
    priority_classes = registry.store("priorityclasses", "scheduling.k8s.io")
    quotas = registry.store("resourcequotas")
    storage_classes = registry.store("storageclasses", "storage.k8s.io")

    async def get_namespace(name: str) -> Obj:
        return await namespaces.get(None, name)

    async def get_service_account(namespace: str, name: str) -> Obj:
        return await service_accounts.get(namespace, name)

    async def get_pod(namespace: str, name: str) -> Obj:
        return await pods.get(namespace, name)

    async def get_priority_class(name: str) -> Obj:
        return await priority_classes.get(None, name)

    async def list_pods(namespace: str) -> list[Obj]:
        items: list[Obj] = (await pods.list(namespace, ListOptions())).get("items") or []
        return items

    async def list_storage_classes() -> list[Obj]:
        items: list[Obj] = (await storage_classes.list(None, ListOptions())).get("items") or []
        return items

    async def write_quota_status(namespace: str, name: str, status: Obj) -> None:
        def set_status(obj: Obj) -> Obj:
            obj["status"] = status
            return obj
        await quotas.patch(namespace, name, set_status, subresource="status", manager="resourcequota")

    first: list[object] = [
        NamespaceLifecycle(namespaces.lister(), get_namespace),
        LimitRanger(registry.lister("limitranges")),
        ServiceAccount(service_accounts.lister(), get_service_account),
        NodeRestriction(get_pod),
        Priority(priority_classes.lister(), get_priority_class),
        DefaultTolerationSeconds(),
        DefaultStorageClass(list_storage_classes),
        StorageObjectInUseProtection(),
    ]
    if authorizer is not None:
        first += [CertificateApproval(authorizer), CertificateSigning(authorizer), CertificateSubjectRestriction()]
    last: list[object] = [ResourceQuota(quotas.lister(), list_pods=list_pods, write_status=write_quota_status)]
    return AdmissionChain([*(p for p in first if getattr(p, "name", "") not in off), *extra,
                           *(p for p in last if getattr(p, "name", "") not in off)])
