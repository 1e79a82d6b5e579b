"""NamespaceLifecycle: nothing is created in a namespace that is missing or terminating, and the
namespaces the system itself lives in cannot be deleted.

Mirrors plugin/pkg/admission/namespace/lifecycle. The namespace is looked up in the watch
cache first and in storage when the cache has not seen it yet (a namespace created a moment
ago), so a create right after its namespace's create is not refused. As upstream's, it runs
in the mutating phase (first in the chain) and changes nothing, so a request into a missing
namespace is answered NotFound before any other plugin or validation speaks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apiserver.admission.interfaces import Attributes, Obj, Operation
from apiserver.registry.lister import CacheLister
from kube.errors import ApiError, Forbidden, NotFound

__all__ = ["NamespaceLifecycle", "IMMORTAL_NAMESPACES"]

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, namespaces: CacheLister, get_namespace: Callable[[str], Awaitable[Obj]]) -> None:
        self.namespaces, self.get_namespace = namespaces, get_namespace

    def handles(self, operation: Operation) -> bool:
        return operation in (Operation.CREATE, Operation.DELETE)

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation is Operation.DELETE:
            if attrs.targets("", "namespaces") and attrs.name in IMMORTAL_NAMESPACES:
                raise Forbidden(f'namespaces "{attrs.name}" is forbidden: this namespace may not be deleted',
                                details={"name": attrs.name, "kind": "namespaces"})
            return
        if not attrs.resource.namespaced or not attrs.namespace:
            return
        ns = self.namespaces.get(None, attrs.namespace)
        if ns is None:
            try:
                ns = await self.get_namespace(attrs.namespace)
            except NotFound:
                raise NotFound(f'namespaces "{attrs.namespace}" not found',
                               details={"name": attrs.namespace, "kind": "namespaces"}) from None
        if (ns.get("status") or {}).get("phase") == "Terminating":
            raise ApiError(f"unable to create new content in namespace {attrs.namespace} because it is being "
                           "terminated", reason="Forbidden", code=403)
