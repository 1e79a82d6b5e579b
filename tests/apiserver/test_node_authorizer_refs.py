"""The Node authorizer lets a kubelet read the ConfigMaps and Secrets its pods consume (through
env, volumes and projected sources) and request tokens for their service accounts, and
refuses the same for objects no pod on that node uses."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.attributes import Attributes, Decision
from apiserver.authz.node import NodeAuthorizer

POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "n1", "serviceAccountName": "builder", "containers": [{"name": "c"}],
             "volumes": [{"name": "v", "projected": {"sources": [
                 {"configMap": {"name": "projected-cm"}}, {"secret": {"name": "projected-secret"}},
                 {"serviceAccountToken": {"path": "token"}}]}}]},
}


def _authorizer() -> NodeAuthorizer:
    pods = {"n1": [POD], "n2": []}
    return NodeAuthorizer(pods_on_node=lambda node: pods.get(node, []), pod=lambda ns, name: None)


def _ask(node: str, *, verb: str, resource: str, name: str, namespace: str = "ns",
         subresource: str = "") -> Decision:
    user = UserInfo(name=f"system:node:{node}", groups=("system:nodes", "system:authenticated"))
    attrs = Attributes(user=user, verb=verb, resource=resource, subresource=subresource, namespace=namespace,
                       name=name)
    return _authorizer().authorize(attrs)[0]


@pytest.mark.parametrize(("resource", "name"), [("configmaps", "projected-cm"), ("secrets", "projected-secret")])
def test_projected_sources_are_readable_by_the_pods_node_only(resource: str, name: str) -> None:
    assert _ask("n1", verb="get", resource=resource, name=name) == Decision.ALLOW
    assert _ask("n2", verb="get", resource=resource, name=name) == Decision.DENY
    assert _ask("n1", verb="get", resource=resource, name=name, namespace="other") == Decision.DENY


def test_token_requests_only_for_service_accounts_of_the_nodes_pods() -> None:
    assert _ask("n1", verb="create", resource="serviceaccounts", subresource="token", name="builder") \
        == Decision.ALLOW
    assert _ask("n1", verb="create", resource="serviceaccounts", subresource="token", name="default") \
        == Decision.DENY
    assert _ask("n2", verb="create", resource="serviceaccounts", subresource="token", name="builder") \
        == Decision.DENY
