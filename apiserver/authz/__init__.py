"""Authorization: Node and RBAC authorizers over request attributes, and the rules they list."""

from apiserver.authz.attributes import (
                                        Attributes,
                                        Authorizer,
                                        Decision,
                                        UnionAuthorizer,
                                        forbidden_error,
                                        forbidden_message,
)
from apiserver.authz.node import NodeAuthorizer
from apiserver.authz.rbac import RBACAuthorizer
from apiserver.authz.rules import RuleResolver, RuleSet

__all__ = ["Attributes", "Authorizer", "Decision", "UnionAuthorizer", "forbidden_error", "forbidden_message",
           "NodeAuthorizer", "RBACAuthorizer", "RuleResolver", "RuleSet"]
