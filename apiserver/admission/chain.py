"""The admission chain: every mutating plugin in order, then every validating plugin in order.

Mirrors apiserver's admission chainAdmissionHandler. The registry calls `admit` before the
kind's strategy prepares and validates the object and `validate` after it, for every write
of every resource (see `interfaces`). A plugin that implements both interfaces takes part in
both phases. Safe to share between concurrent requests: the chain holds no request state.
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.admission.interfaces import Attributes, MutationInterface, Obj, Operation, ValidationInterface
from apiserver.authn import UserInfo
from kube.resources import ResourceInfo

__all__ = ["AdmissionChain", "RequestAdmission"]


class AdmissionChain:
    def __init__(self, plugins: Iterable[object] = ()) -> None:
        self.plugins = list(plugins)
        self.mutating = [p for p in self.plugins if isinstance(p, MutationInterface)]
        self.validating = [p for p in self.plugins if isinstance(p, ValidationInterface)]

    @property
    def names(self) -> list[str]:
        return [str(getattr(p, "name", type(p).__name__)) for p in self.plugins]

    async def admit(self, attrs: Attributes) -> None:
        """Run the mutating plugins that handle this operation; the first rejection stops the chain."""
        for plugin in self.mutating:
            if plugin.handles(attrs.operation):
                await plugin.admit(attrs)

    async def validate(self, attrs: Attributes) -> None:
        """Run the validating plugins that handle this operation; the first rejection stops the chain."""
        for plugin in self.validating:
            if plugin.handles(attrs.operation):
                await plugin.validate(attrs)


class RequestAdmission:
    """The chain bound to one request's user: what the registry calls around each write it makes."""

    def __init__(self, chain: AdmissionChain, user: UserInfo) -> None:
        self.chain, self.user = chain, user

    def attributes(self, operation: Operation, *, resource: ResourceInfo, subresource: str | None,
                   namespace: str | None, name: str, obj: Obj | None, old: Obj | None,
                   dry_run: bool) -> Attributes:
        return Attributes(operation=operation, resource=resource, subresource=subresource or "",
                          namespace=namespace or "", name=name, object=obj, old_object=old, user=self.user,
                          dry_run=dry_run)
