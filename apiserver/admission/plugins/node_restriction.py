"""NodeRestriction: a kubelet may only write the Node and the node Lease named after itself,
and ask for ServiceAccount tokens only bound to pods on its node (see _node_tokens.py).

The Node authorizer allows `create` on nodes and leases to every node identity because the
name is not part of a create request's path; this check closes that gap with the body, and
holds for updates and deletes as well.
"""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Operation
from apiserver.admission.plugins._node_tokens import GetPod, check_node_token_request
from apiserver.authn import UserInfo
from kube.errors import Forbidden

__all__ = ["NodeRestriction", "node_of"]


def node_of(user: UserInfo) -> str | None:
    """The node a kubelet's identity names (`system:node:NAME` in `system:nodes`), else None."""
    if "system:nodes" in user.groups and user.name.startswith("system:node:"):
        return user.name[len("system:node:"):]
    return None


class NodeRestriction:
    name = "NodeRestriction"

    def __init__(self, get_pod: GetPod | None = None) -> None:
        self.get_pod = get_pod

    def handles(self, operation: Operation) -> bool:
        return operation in (Operation.CREATE, Operation.UPDATE, Operation.DELETE)

    async def validate(self, attrs: Attributes) -> None:
        node = node_of(attrs.user)
        if node is None:
            return
        prefix = f'{attrs.resource.qualified} "{attrs.name}" is forbidden: '
        if attrs.resource.group == "" and attrs.resource.plural == "nodes" and attrs.name != node:
            raise Forbidden(prefix + f'node "{node}" is not allowed to modify node "{attrs.name}"')
        if attrs.targets("coordination.k8s.io", "leases") and attrs.namespace == "kube-node-lease" \
                and attrs.name != node:
            raise Forbidden(prefix + "can only access node lease with the same name as the requesting node")
        await check_node_token_request(node, attrs, self.get_pod)
