"""The two authorizers that need no policy: privileged groups, and AlwaysAllow."""

from __future__ import annotations

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.attributes import Attributes, Decision
from apiserver.authz.rules import RuleSet

__all__ = ["PrivilegedGroups", "AlwaysAllow"]


class PrivilegedGroups:
    """Allows everything to members of the given groups; no opinion on anyone else.

    kube-apiserver puts this first for system:masters, so that group is never denied, not
    even before the bootstrap policy has reached the RBAC authorizer's cache. Like upstream's
    it lists no rules: system:masters' rules come from its cluster-admin binding.
    """

    def __init__(self, *groups: str) -> None:
        self.groups = frozenset(groups)

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if self.groups.intersection(attrs.user.groups):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


class AlwaysAllow:
    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """Everything, on every resource and path."""
        return RuleSet(resource_rules=({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},),
                       non_resource_rules=({"verbs": ["*"], "nonResourceURLs": ["*"]},))
