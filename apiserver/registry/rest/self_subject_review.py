"""SelfSubjectReview: who does the API server take the caller to be? (`kubectl auth whoami`)

Mirrors pkg/registry/authentication/selfsubjectreview: nothing is stored; the review comes
back with `status.userInfo` {username, uid, groups, extra} of the user the request runs as
(the impersonated one when the request impersonates), empty fields left out as upstream's
omitempty does, and `metadata.creationTimestamp` set to now.
"""

from __future__ import annotations

from apiserver.authn import user_info_object
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.clock import now_rfc3339

__all__ = ["SelfSubjectReviewStorage"]


class SelfSubjectReviewStorage:
    """Served in v1 and, for older clients, v1beta1 and v1alpha1: the same answer in each."""

    def __init__(self, version: str = "v1") -> None:
        self.kind = Kind("authentication.k8s.io", version, "SelfSubjectReview")

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        return {"kind": self.kind.kind, "apiVersion": self.kind.api_version,
                "metadata": {"creationTimestamp": now_rfc3339()}, "status": {"userInfo": user_info_object(ctx.user)}}
