"""SelfSubjectRulesReview: which rules apply to the caller in `spec.namespace`?

Mirrors pkg/registry/authorization/selfsubjectrulesreview: nothing is stored; the
authorizer's rule resolver lists the rules (RBAC's cluster bindings and the namespace's
bindings that name the caller) and the review comes back with `status.resourceRules`,
`status.nonResourceRules` (both always present, possibly empty), `incomplete` (true when an
authorizer that applies cannot enumerate its rules, the Node authorizer for a node) and
`evaluationError` when something could not be resolved. `kubectl auth can-i --list` prints
it. A missing `spec.namespace` is 400 `no namespace on request`, as upstream.
"""

from __future__ import annotations

from apiserver.authz import RuleResolver
from apiserver.registry.rest.interfaces import Context, Kind, Obj
from kube.errors import BadRequest

__all__ = ["SelfSubjectRulesReviewStorage"]


class SelfSubjectRulesReviewStorage:
    kind = Kind("authorization.k8s.io", "v1", "SelfSubjectRulesReview")

    def __init__(self, resolver: RuleResolver) -> None:
        self.resolver = resolver

    async def create(self, ctx: Context, name: str | None, obj: Obj) -> Obj:
        spec = obj.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise BadRequest("spec: must be an object")
        namespace = (spec or {}).get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise BadRequest("spec.namespace: must be a string")
        if not namespace:
            raise BadRequest("no namespace on request")
        rules = self.resolver.rules_for(ctx.user, namespace)
        status: Obj = {"resourceRules": list(rules.resource_rules), "nonResourceRules": list(rules.non_resource_rules),
                       "incomplete": rules.incomplete}
        if rules.evaluation_error:
            status["evaluationError"] = rules.evaluation_error
        return {"kind": self.kind.kind, "apiVersion": self.kind.api_version, "metadata": {"creationTimestamp": None},
                "spec": {}, "status": status}
