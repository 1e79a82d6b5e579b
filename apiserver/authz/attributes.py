"""Authorization attributes: who wants to do which verb to what, derived from the request.

Mirrors apiserver's authorizer.Attributes and RequestInfo: a resource request has a verb
(get, list, watch, create, update, patch, delete, deletecollection), an API group, a
resource and optional subresource, namespace and name; anything else is a non-resource
request with a path and a lowercase HTTP verb.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.rules import RuleSet, union_rules
from kube.errors import Forbidden

__all__ = ["Attributes", "Decision", "Authorizer", "UnionAuthorizer", "forbidden_error", "forbidden_message"]


class Decision(Enum):
    ALLOW = "allow"
    DENY = "deny"
    NO_OPINION = "no-opinion"


@dataclass(frozen=True)
class Attributes:
    user: UserInfo
    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    @property
    def resource_with_sub(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


class Authorizer(Protocol):
    def authorize(self, attrs: Attributes) -> tuple[Decision, str]: ...


class UnionAuthorizer:
    """The first authorizer with an opinion decides, as `--authorization-mode Node,RBAC`."""

    def __init__(self, *authorizers: Authorizer) -> None:
        self.authorizers = authorizers

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        reasons = []
        for a in self.authorizers:
            decision, reason = a.authorize(attrs)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "; ".join(reasons)

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """The rules of every authorizer that can list them, in order (see authz/rules.py)."""
        return union_rules(self.authorizers, user, namespace)


def forbidden_message(attrs: Attributes, reason: str = "") -> str:
    """Kubernetes' wording: `pods "x" is forbidden: User "u" cannot get resource "pods" in API group ""
    in the namespace "default"`."""
    user = f'User "{attrs.user.name}"'
    if not attrs.resource_request:
        msg = f'forbidden: {user} cannot {attrs.verb} path "{attrs.path}"'
    else:
        # The subject names the group and resource only; the subresource shows in `resource "pods/log"`.
        qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
        subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
        scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        msg = (f'{subject} is forbidden: {user} cannot {attrs.verb} resource "{attrs.resource_with_sub}" in API '
               f'group "{attrs.api_group}" {scope}')
    return f"{msg}: {reason}" if reason else msg


def forbidden_error(attrs: Attributes, reason: str = "") -> Forbidden:
    """The 403 for refused attributes: Kubernetes' message, with details naming the resource asked for."""
    details = {"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource} \
        if attrs.resource_request else None
    return Forbidden(forbidden_message(attrs, reason), details=details)
