"""NodeRestriction: a kubelet may only create the Node and the node Lease named after itself.

The Node authorizer allows `create` on nodes and leases to every node identity because the
name is not part of a create request's path; this check closes that gap with the body.
"""

from __future__ import annotations

from typing import Any

from kube.errors import Forbidden
from kube.resources import ResourceInfo
from apiserver.authn import UserInfo

__all__ = ["node_restriction"]


def _node_of(user: UserInfo) -> str | None:
    if "system:nodes" in user.groups and user.name.startswith("system:node:"):
        return user.name[len("system:node:"):]
    return None


def node_restriction(user: UserInfo, info: ResourceInfo, namespace: str | None, body: dict[str, Any]) -> None:
    """Raise Forbidden when a node creates a Node or node Lease that is not its own."""
    node = _node_of(user)
    if node is None:
        return
    name = (body.get("metadata") or {}).get("name")
    resource = f"{info.plural}.{info.group}" if info.group else info.plural
    prefix = f'{resource} "{name}" is forbidden: '
    if info.group == "" and info.plural == "nodes" and name != node:
        raise Forbidden(prefix + f'node "{node}" is not allowed to modify node "{name}"')
    if info.group == "coordination.k8s.io" and info.plural == "leases" and namespace == "kube-node-lease" \
            and name != node:
        raise Forbidden(prefix + "can only access node lease with the same name as the requesting node")
