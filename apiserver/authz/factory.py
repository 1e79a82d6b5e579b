"""`--authorization-mode`: the authorizers in order (Node, RBAC, AlwaysAllow), over the listers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.authz.attributes import Authorizer, UnionAuthorizer
from apiserver.authz.node import NodeAuthorizer
from apiserver.authz.rbac import RBACAuthorizer
from apiserver.authz.simple import AlwaysAllow, PrivilegedGroups
from apiserver.registry.resource_registry import ResourceRegistry

__all__ = ["new_authorizer"]

_RBAC = "rbac.authorization.k8s.io"
_NODE_NAME = "spec.nodeName"  # the pods' index, named after the field as upstream's pod indexer is


def _node_name(pod: dict[str, Any]) -> str | None:
    return (pod.get("spec") or {}).get("nodeName") or None


def _node(registry: ResourceRegistry) -> Authorizer:
    pods = registry.lister("pods")
    pods.add_index(_NODE_NAME, _node_name)
    return NodeAuthorizer(pods_on_node=lambda node: pods.by_index(_NODE_NAME, node),
                          pod=lambda namespace, name: pods.get(namespace, name))


def _rbac(registry: ResourceRegistry) -> Authorizer:
    return RBACAuthorizer(roles=registry.lister("roles", _RBAC), cluster_roles=registry.lister("clusterroles", _RBAC),
                          role_bindings=registry.lister("rolebindings", _RBAC),
                          cluster_role_bindings=registry.lister("clusterrolebindings", _RBAC))


_MODES: dict[str, Callable[[ResourceRegistry], Authorizer]] = {
    "Node": _node, "RBAC": _rbac, "AlwaysAllow": lambda _registry: AlwaysAllow(),
}


def new_authorizer(mode: str, registry: ResourceRegistry) -> UnionAuthorizer:
    """The union of the named authorizers after the system:masters one; ValueError for an unknown mode.

    The union also resolves rules (`rules_for`, for SelfSubjectRulesReview) from its parts.
    """
    chain: list[Authorizer] = [PrivilegedGroups("system:masters")]
    for name in (m.strip() for m in mode.split(",")):
        if name not in _MODES:
            raise ValueError(f"unknown authorization mode {name!r}")
        chain.append(_MODES[name](registry))
    return UnionAuthorizer(*chain)
