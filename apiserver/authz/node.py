"""The Node authorizer: what a kubelet (`system:node:<name>` in `system:nodes`) may do.

Mirrors plugin/pkg/auth/authorizer/node, reduced to what picokube's kubelet needs:
- read: nodes, pods (list/watch all, as upstream; the kubelet filters by spec.nodeName),
  namespaces, services, endpoints, persistentvolumes, and configmaps/secrets/persistentvolumeclaims only when
  a pod bound to this node refers to them;
- create tokens (serviceaccounts/token) for the service accounts of pods bound to it
  (NodeRestriction then requires the token bound to such a pod), and read the configmaps
  and secrets those pods' projected volumes name;
- write its own Node (create, update, patch, including status) and its own Lease in
  kube-node-lease; pods bound to it: status updates and deletes (the end of a graceful
  delete); events (create, patch, update);
- certificatesigningrequests: create, get, list, watch (its client certificate's rotation,
  as upstream's NodeRules; approval of a renewal takes `selfnodeclient`, which kubeadm's
  binding grants to system:nodes);
- anything else: no opinion (RBAC may still allow it); for another node's objects: deny.
It lists no rules (SelfSubjectRulesReview): for a node the answer is incomplete, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from apiserver.authn.authenticator import UserInfo
from apiserver.authz.attributes import Attributes, Decision
from apiserver.authz.rules import RuleSet

__all__ = ["NodeAuthorizer", "node_name_of"]

Obj = dict[str, Any]
_READ = frozenset({"get", "list", "watch"})
_WRITE_SELF = frozenset({"create", "get", "list", "watch", "update", "patch"})


def node_name_of(attrs: Attributes) -> str | None:
    return _node_of(attrs.user)


def _node_of(user: UserInfo) -> str | None:
    if "system:nodes" in user.groups and user.name.startswith("system:node:"):
        return user.name[len("system:node:"):]
    return None


def _pod_refs(pod: Obj) -> set[tuple[str, str]]:
    refs: set[tuple[str, str]] = set()
    spec = pod.get("spec") or {}
    for vol in spec.get("volumes") or []:
        if (vol.get("configMap") or {}).get("name"):
            refs.add(("configmaps", vol["configMap"]["name"]))
        if (vol.get("secret") or {}).get("secretName"):
            refs.add(("secrets", vol["secret"]["secretName"]))
        if (vol.get("persistentVolumeClaim") or {}).get("claimName"):
            refs.add(("persistentvolumeclaims", vol["persistentVolumeClaim"]["claimName"]))
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for env in c.get("env") or []:
            src = env.get("valueFrom") or {}
            if (src.get("configMapKeyRef") or {}).get("name"):
                refs.add(("configmaps", src["configMapKeyRef"]["name"]))
            if (src.get("secretKeyRef") or {}).get("name"):
                refs.add(("secrets", src["secretKeyRef"]["name"]))
        for env_from in c.get("envFrom") or []:
            if (env_from.get("configMapRef") or {}).get("name"):
                refs.add(("configmaps", env_from["configMapRef"]["name"]))
            if (env_from.get("secretRef") or {}).get("name"):
                refs.add(("secrets", env_from["secretRef"]["name"]))
    for s in spec.get("imagePullSecrets") or []:
        if s.get("name"):
            refs.add(("secrets", s["name"]))
    return refs | _projected_refs(spec)


def _projected_refs(spec: Obj) -> set[tuple[str, str]]:
    """The service account and what projected volumes name: the node graph's other pod edges."""
    refs: set[tuple[str, str]] = set()
    if spec.get("serviceAccountName"):
        refs.add(("serviceaccounts", spec["serviceAccountName"]))
    for vol in spec.get("volumes") or []:
        for source in (vol.get("projected") or {}).get("sources") or []:
            if (source.get("configMap") or {}).get("name"):
                refs.add(("configmaps", source["configMap"]["name"]))
            if (source.get("secret") or {}).get("name"):
                refs.add(("secrets", source["secret"]["name"]))
    return refs


class NodeAuthorizer:
    def __init__(self, *, pods_on_node: Callable[[str], Iterable[Obj]], pod: Callable[[str, str], Obj | None]) -> None:
        self.pods_on_node = pods_on_node
        self.pod = pod

    def rules_for(self, user: UserInfo, namespace: str) -> RuleSet:
        """Nothing to list: a node's permissions depend on its pods, so its rules are incomplete (upstream's)."""
        if _node_of(user) is None:
            return RuleSet()
        return RuleSet(incomplete=True, errors=("node authorizer does not support user rule resolution",))

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        node = node_name_of(attrs)
        if node is None or not attrs.resource_request:
            return Decision.NO_OPINION, ""
        group, res, sub, verb = attrs.api_group, attrs.resource, attrs.subresource, attrs.verb
        if group == "" and res == "nodes":
            if verb in _READ and not sub:
                return Decision.ALLOW, ""
            if verb in _WRITE_SELF and (attrs.name == node or (verb == "create" and not attrs.name)):
                return Decision.ALLOW, ""
            return Decision.DENY, f'node "{node}" is not allowed to modify node "{attrs.name}"'
        if group == "coordination.k8s.io" and res == "leases":
            if attrs.namespace == "kube-node-lease" and (attrs.name == node or (verb == "create" and not attrs.name)) \
                    and verb in _WRITE_SELF | {"delete"}:
                return Decision.ALLOW, ""
            return Decision.DENY, f'node "{node}" can only access its own lease in kube-node-lease'
        if group == "" and res == "pods":
            if verb in _READ and not sub:
                return Decision.ALLOW, ""
            if sub in ("status", "") and verb in ("update", "patch", "delete", "get"):
                pod = self.pod(attrs.namespace, attrs.name)
                if pod is not None and (pod.get("spec") or {}).get("nodeName") == node:
                    return Decision.ALLOW, ""
                return Decision.DENY, f'node "{node}" can only modify pods bound to it'
            return Decision.NO_OPINION, ""
        if group == "" and res == "events" and verb in ("create", "update", "patch", "get", "list", "watch"):
            return Decision.ALLOW, ""
        if group == "" and res in ("namespaces", "services", "endpoints") and verb in _READ:
            return Decision.ALLOW, ""
        if group == "" and res == "persistentvolumes" and verb in _READ:
            # Wider than upstream (which allows a get of the volumes its pods' claims are bound to):
            # the kubelet's local-path cleanup lists volumes to find directories whose volume is gone.
            return Decision.ALLOW, ""
        if group == "" and res == "serviceaccounts":
            return self._authorize_create_token(node, attrs)
        if group == "certificates.k8s.io" and res == "certificatesigningrequests":
            # Client certificate rotation: a node asks for its next certificate itself.
            if not sub and verb in ("create", "get", "list", "watch"):
                return Decision.ALLOW, ""
            return Decision.NO_OPINION, ""
        if group == "" and res in ("configmaps", "secrets", "persistentvolumeclaims") and verb == "get":
            for pod in self.pods_on_node(node):
                if (pod.get("metadata") or {}).get("namespace") == attrs.namespace and \
                        (res, attrs.name) in _pod_refs(pod):
                    return Decision.ALLOW, ""
            return Decision.DENY, f'no relationship found between node "{node}" and this object'
        return Decision.NO_OPINION, ""

    def _authorize_create_token(self, node: str, attrs: Attributes) -> tuple[Decision, str]:
        """authorizeCreateToken: a token for the account of a pod bound to this node; else no opinion."""
        if attrs.verb != "create" or not attrs.name:
            return Decision.NO_OPINION, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return Decision.NO_OPINION, "can only create token subresource of serviceaccount"
        for pod in self.pods_on_node(node):
            if (pod.get("metadata") or {}).get("namespace") == attrs.namespace and \
                    ("serviceaccounts", attrs.name) in _pod_refs(pod):
                return Decision.ALLOW, ""
        return Decision.NO_OPINION, f"no relationship found between node '{node}' and this object"
