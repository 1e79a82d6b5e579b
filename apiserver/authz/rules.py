"""Rule resolution: which rules apply to a user in a namespace, for SelfSubjectRulesReview.

Mirrors apiserver's authorizer.RuleResolver and the union's RulesFor: each authorizer that
can enumerate what it allows contributes its rules; one that cannot (the Node authorizer,
for a node) says the list is `incomplete` and why. The union concatenates the rules in
authorizer order, is incomplete when any part is, and joins the parts' errors as
upstream's error aggregate prints them (one error as is, several as `[a, b]`, repeats once).
Authorizers that implement no `rules_for` (system:masters' PrivilegedGroups, as upstream)
contribute nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from apiserver.authn.authenticator import UserInfo

__all__ = ["RuleResolver", "RuleSet", "union_rules"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class RuleSet:
    """Rules as SubjectRulesReviewStatus carries them: `resourceRules`, `nonResourceRules` entries."""

    resource_rules: tuple[Obj, ...] = ()
    non_resource_rules: tuple[Obj, ...] = ()
    incomplete: bool = False
    errors: tuple[str, ...] = field(default=())

    @property
    def evaluation_error(self) -> str:
        """The errors as one message, in upstream's aggregate wording (duplicates dropped); empty when none."""
        unique = list(dict.fromkeys(self.errors))
        return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]" if unique else ""


@runtime_checkable
class RuleResolver(Protocol):
    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """The rules that apply to `user` in `namespace` (cluster-wide ones included)."""
        ...


def union_rules(resolvers: Iterable[object], user: UserInfo, namespace: str) -> RuleSet:
    """Every resolver's rules in order; incomplete when any is; all errors kept."""
    resource: list[Obj] = []
    non_resource: list[Obj] = []
    incomplete = False
    errors: list[str] = []
    for r in resolvers:
        if not isinstance(r, RuleResolver):
            continue
        got = r.rules_for(user, namespace)
        resource += got.resource_rules
        non_resource += got.non_resource_rules
        incomplete = incomplete or got.incomplete
        errors += got.errors
    return RuleSet(tuple(resource), tuple(non_resource), incomplete, tuple(errors))
