"""Authorization: Node and RBAC authorizers over request attributes."""

from apiserver.authz.attributes import Attributes, Authorizer, Decision, UnionAuthorizer, forbidden_message
from apiserver.authz.node import NodeAuthorizer
from apiserver.authz.rbac import RBACAuthorizer

__all__ = ["Attributes", "Authorizer", "Decision", "UnionAuthorizer", "forbidden_message",
           "NodeAuthorizer", "RBACAuthorizer"]
