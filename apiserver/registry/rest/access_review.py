"""SelfSubjectAccessReview and SubjectAccessReview: may the caller (or the user the spec
names) do what `spec.resourceAttributes` describes?

Nothing is stored: the authorizer answers and the review comes back with its status. A
SubjectAccessReview names its user in `spec.user`, `spec.groups`, `spec.uid` and
`spec.extra` (one of user or groups is required), as upstream.
"""

from __future__ import annotations

from apiserver.authn import UserInfo
from apiserver.authz import Attributes, Authorizer, Decision
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest, FieldError, Invalid

__all__ = ["SelfSubjectAccessReviewStorage", "SubjectAccessReviewStorage"]


def _s(d: dict[str, object], key: str) -> str:
    return str(d.get(key) or "")


class SelfSubjectAccessReviewStorage:
    kind = Kind("authorization.k8s.io", "v1", "SelfSubjectAccessReview")

    def __init__(self, authorizer: Authorizer | None) -> None:
        self.authorizer = authorizer

    def subject(self, ctx: Context, spec: Obj) -> UserInfo:
        return ctx.user

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        spec = obj.get("spec") or {}
        user = self.subject(ctx, spec)
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if isinstance(ra, dict):
            attrs = Attributes(user=user, verb=_s(ra, "verb"), api_group=_s(ra, "group"),
                               resource=_s(ra, "resource"), subresource=_s(ra, "subresource"),
                               namespace=_s(ra, "namespace"), name=_s(ra, "name"))
        elif isinstance(nra, dict):
            attrs = Attributes(user=user, verb=_s(nra, "verb"), resource_request=False, path=_s(nra, "path"))
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


class SubjectAccessReviewStorage(SelfSubjectAccessReviewStorage):
    kind = Kind("authorization.k8s.io", "v1", "SubjectAccessReview")

    def subject(self, ctx: Context, spec: Obj) -> UserInfo:
        groups, extra = spec.get("groups") or [], spec.get("extra") or {}
        if not spec.get("user") and not groups:
            err = FieldError("spec.user,spec.groups", 'Invalid value: "": at least one of user or group must be '
                             "specified")
            raise Invalid(f'SubjectAccessReview.authorization.k8s.io "" is invalid: {err}',
                          details={"name": "", "group": "authorization.k8s.io", "kind": "SubjectAccessReview",
                                   "causes": [err.cause()]})
        return UserInfo(name=_s(spec, "user"), uid=_s(spec, "uid"), groups=tuple(str(g) for g in groups),
                        extra={str(k): tuple(str(x) for x in v) for k, v in extra.items() if isinstance(v, list)})
