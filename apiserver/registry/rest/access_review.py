"""SelfSubjectAccessReview: may the caller do what `spec.resourceAttributes` describes?

Nothing is stored: the authorizer answers and the review comes back with its status.
"""

from __future__ import annotations

from apiserver.authz import Attributes, Authorizer, Decision
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest

__all__ = ["SelfSubjectAccessReviewStorage"]


def _s(d: dict[str, object], key: str) -> str:
    return str(d.get(key) or "")


class SelfSubjectAccessReviewStorage:
    kind = Kind("authorization.k8s.io", "v1", "SelfSubjectAccessReview")

    def __init__(self, authorizer: Authorizer | None) -> None:
        self.authorizer = authorizer

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        spec = obj.get("spec") or {}
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if isinstance(ra, dict):
            attrs = Attributes(user=ctx.user, verb=_s(ra, "verb"), api_group=_s(ra, "group"),
                               resource=_s(ra, "resource"), subresource=_s(ra, "subresource"),
                               namespace=_s(ra, "namespace"), name=_s(ra, "name"))
        elif isinstance(nra, dict):
            attrs = Attributes(user=ctx.user, verb=_s(nra, "verb"), resource_request=False, path=_s(nra, "path"))
        else:
            raise BadRequest("spec.resourceAttributes or spec.nonResourceAttributes is required")
        decision, reason = (Decision.ALLOW, "") if self.authorizer is None else self.authorizer.authorize(attrs)
        status: Obj = {"allowed": decision is Decision.ALLOW}
        if decision is Decision.DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        obj["status"] = status
        obj.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        return obj
