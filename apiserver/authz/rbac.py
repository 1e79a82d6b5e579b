"""RBAC: Roles, ClusterRoles and their bindings, evaluated from the API server's watch caches.

Mirrors plugin/pkg/auth/authorizer/rbac: a request is allowed when some binding that names
the user (User), one of its groups (Group) or its ServiceAccount (ServiceAccount) refers to
a role with a rule covering the verb, API group, resource (with subresource, `*` matching
any) and, when the rule lists them, the resource name. ClusterRoleBindings apply
everywhere; RoleBindings only in their namespace, and may refer to a ClusterRole. Rules
for non-resource URLs match paths (`/healthz`, a trailing `*` is a prefix). RBAC never
denies: no matching rule is "no opinion", and the union answers 403.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from apiserver.authz.attributes import Attributes, Decision

__all__ = ["RBACAuthorizer", "rule_allows"]

Obj = dict[str, Any]
Lister = Callable[[str], Iterable[Obj]]  # plural -> current objects


def _match(values: list[str] | None, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)


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


def _subject_matches(subject: Obj, attrs: Attributes, binding_ns: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == attrs.user.name
    if kind == "Group":
        return name in attrs.user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return attrs.user.name == f"system:serviceaccount:{ns}:{name}"
    return False


class RBACAuthorizer:
    def __init__(self, lister: Lister) -> None:
        self.lister = lister

    def _role_rules(self, ref: Obj, namespace: str) -> list[Obj]:
        kind, name = ref.get("kind"), ref.get("name")
        plural = "clusterroles" if kind == "ClusterRole" else "roles"
        for role in self.lister(plural):
            meta = role.get("metadata") or {}
            if meta.get("name") == name and (plural == "clusterroles" or meta.get("namespace") == namespace):
                return list(role.get("rules") or [])
        return []

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        for binding in self.lister("clusterrolebindings"):
            if any(_subject_matches(s, attrs, "") for s in binding.get("subjects") or []):
                if any(rule_allows(r, attrs) for r in self._role_rules(binding.get("roleRef") or {}, "")):
                    return Decision.ALLOW, ""
        if attrs.namespace:
            for binding in self.lister("rolebindings"):
                ns = (binding.get("metadata") or {}).get("namespace") or ""
                if ns != attrs.namespace:
                    continue
                if any(_subject_matches(s, attrs, ns) for s in binding.get("subjects") or []):
                    if any(rule_allows(r, attrs) for r in self._role_rules(binding.get("roleRef") or {}, ns)):
                        return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""
