"""RBAC: Roles, ClusterRoles and their bindings, evaluated from the API server's watch caches.

Mirrors plugin/pkg/auth/authorizer/rbac: a request is allowed when some binding that names
the user (User), one of its groups (Group) or its ServiceAccount (ServiceAccount) refers to
a role with a rule covering the verb, API group, resource (with subresource, `*` matching
any) and, when the rule lists them, the resource name. ClusterRoleBindings apply
everywhere; RoleBindings only in their namespace, and may refer to a ClusterRole. Rules
for non-resource URLs match paths (`/healthz`, a trailing `*` is a prefix). RBAC never
denies: no matching rule is "no opinion", and the union answers 403. `rules_for` lists the
rules that apply to a user in a namespace (SelfSubjectRulesReview), as upstream's
DefaultRuleResolver.RulesFor: the cluster bindings' roles, then the namespace's.
"""

from __future__ import annotations

from typing import Any

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.attributes import Attributes, Decision
from apiserver.authz.rules import RuleSet
from apiserver.registry.lister import ObjectLister

__all__ = ["RBACAuthorizer", "rule_allows"]

Obj = dict[str, Any]


def _match(values: list[str] | None, wanted: str) -> bool:
    if not values:
        return False
    return "*" in values or wanted in values


def rule_allows(rule: Obj, attrs: Attributes) -> bool:
    if not _match(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == attrs.path or (url.endswith("*") and attrs.path.startswith(url[:-1])):
                return True
        return False
    if not _match(rule.get("apiGroups"), attrs.api_group):
        return False
    resources = rule.get("resources") or []
    combined = attrs.resource_with_sub
    if not ("*" in resources or combined in resources or
            (attrs.subresource and f"*/{attrs.subresource}" in resources) or
            (not attrs.subresource and attrs.resource in resources)):
        return False
    names = rule.get("resourceNames")
    return not names or attrs.name in names


def _subject_matches(subject: Obj, user: UserInfo, binding_ns: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user.name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user.name == f"system:serviceaccount:{ns}:{name}"
    return False


def _applies_to(binding: Obj, user: UserInfo, ns: str) -> bool:
    return any(_subject_matches(s, user, ns) for s in binding.get("subjects") or [] if isinstance(s, dict))


def _resource_rule(rule: Obj) -> Obj:
    out: Obj = {"verbs": list(rule.get("verbs") or [])}
    for key in ("apiGroups", "resources", "resourceNames"):
        if rule.get(key):
            out[key] = list(rule[key])
    return out


class RBACAuthorizer:
    """Allows what a (Cluster)RoleBinding of the user grants; no opinion otherwise.

    Reads roles and bindings through the watch caches' listers: each decision is a walk over
    the cluster bindings and the request namespace's bindings, with role lookups by name.
    """

    def __init__(self, *, roles: ObjectLister, cluster_roles: ObjectLister, role_bindings: ObjectLister,
                 cluster_role_bindings: ObjectLister) -> None:
        self.roles, self.cluster_roles = roles, cluster_roles
        self.role_bindings, self.cluster_role_bindings = role_bindings, cluster_role_bindings

    def _role(self, ref: Obj, namespace: str) -> Obj | None:
        name = str(ref.get("name") or "")
        if ref.get("kind") == "ClusterRole":
            return self.cluster_roles.get(None, name)
        return self.roles.get(namespace, name) if namespace else None

    def _role_rules(self, ref: Obj, namespace: str) -> list[Obj]:
        return list((self._role(ref, namespace) or {}).get("rules") or [])

    def _grants(self, binding: Obj, attrs: Attributes, ns: str) -> bool:
        return _applies_to(binding, attrs.user, ns) and \
            any(rule_allows(r, attrs) for r in self._role_rules(binding.get("roleRef") or {}, ns))

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if any(self._grants(b, attrs, "") for b in self.cluster_role_bindings.iter()):
            return Decision.ALLOW, ""
        if attrs.namespace and any(self._grants(b, attrs, attrs.namespace)
                                   for b in self.role_bindings.iter(attrs.namespace)):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""

    def _bound_rules(self, user: UserInfo, namespace: str) -> tuple[list[Obj], list[str]]:
        """Every rule of every role bound to `user` (cluster bindings, then `namespace`'s), and the
        missing roles as upstream's NotFound messages."""
        rules: list[Obj] = []
        errors: list[str] = []
        bindings = [(b, "") for b in self.cluster_role_bindings.iter()]
        if namespace:
            bindings += [(b, namespace) for b in self.role_bindings.iter(namespace)]
        for binding, ns in bindings:
            if not _applies_to(binding, user, ns):
                continue
            ref = binding.get("roleRef") or {}
            role = self._role(ref, ns)
            if role is None:
                kind = "clusterrole" if ref.get("kind") == "ClusterRole" else "role"
                errors.append(f'{kind}.rbac.authorization.k8s.io "{ref.get("name") or ""}" not found')
                continue
            rules += role.get("rules") or []
        return rules, errors

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """The rules RBAC grants `user` in `namespace`: never incomplete, missing roles as errors."""
        rules, errors = self._bound_rules(user, namespace)
        return RuleSet(resource_rules=tuple(_resource_rule(r) for r in rules if r.get("resources")),
                       non_resource_rules=tuple({"verbs": list(r.get("verbs") or []),
                                                 "nonResourceURLs": list(r["nonResourceURLs"])}
                                                for r in rules if r.get("nonResourceURLs")),
                       errors=tuple(errors))
