"""kube-apiserver's default admission order, for the plugins picokube serves.

NamespaceLifecycle first (it answers for a missing namespace before anyone else speaks),
ResourceQuota last (it counts the object every other plugin has finished with).
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.admission.chain import AdmissionChain
from apiserver.admission.interfaces import Obj
from apiserver.admission.plugins import (
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
from apiserver.registry.generic import ListOptions
from apiserver.registry.resource_registry import ResourceRegistry

__all__ = ["default_admission"]


def default_admission(registry: ResourceRegistry, extra: Iterable[object] = ()) -> AdmissionChain:
    """The default chain over the registry's stores and listers, with `extra` plugins at the end."""
    namespaces, pods = registry.store("namespaces"), registry.store("pods")
    priority_classes = registry.store("priorityclasses", "scheduling.k8s.io")
    quotas = registry.store("resourcequotas")
    storage_classes = registry.store("storageclasses", "storage.k8s.io")

    async def get_namespace(name: str) -> Obj:
        return await namespaces.get(None, name)

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

    return AdmissionChain([
        NamespaceLifecycle(namespaces.lister(), get_namespace),
        LimitRanger(registry.lister("limitranges")),
        ServiceAccount(),
        NodeRestriction(),
        Priority(priority_classes.lister(), get_priority_class),
        DefaultTolerationSeconds(),
        DefaultStorageClass(list_storage_classes),
        StorageObjectInUseProtection(),
        *extra,
        ResourceQuota(quotas.lister(), list_pods=list_pods, write_status=write_quota_status),
    ])
