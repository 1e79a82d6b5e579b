"""The bootstrap RBAC policy the API server ensures at start, as kube-apiserver's
`system:*` roles do: cluster-admin for system:masters, discovery and self-review for every
authenticated user, service account issuer discovery for every service account, and the
controller-manager's and scheduler's roles."""

from __future__ import annotations

from typing import Any

__all__ = ["bootstrap_policy"]

Obj = dict[str, Any]
_READ = ["get", "list", "watch"]
_ALL = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


def _cluster_role(name: str, rules: list[Obj]) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": rules}


def _binding(name: str, role: str, subject_kind: str, subject: str) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                         "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": subject_kind, "name": subject}]}


def bootstrap_policy() -> list[tuple[str, Obj]]:
    """(plural, object) pairs, roles before bindings."""
    roles = [
        _cluster_role("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                                        {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        _cluster_role("system:discovery", [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi",
                                                                "/openapi/*", "/version", "/version/", "/healthz",
                                                                "/livez", "/readyz"], "verbs": ["get"]}]),
        _cluster_role("system:service-account-issuer-discovery", [
            {"nonResourceURLs": ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                                 "/openid/v1/jwks", "/openid/v1/jwks/"], "verbs": ["get"]}]),
        _cluster_role("system:basic-user", [{"apiGroups": ["authentication.k8s.io"],
                                             "resources": ["selfsubjectreviews"], "verbs": ["create"]},
                                            {"apiGroups": ["authorization.k8s.io"],
                                             "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                                             "verbs": ["create"]}]),
        _cluster_role("system:kube-controller-manager", [
            # Its controllers together read everything and manage workloads, their pods, events,
            # leases for leader election, nodes' taints and status, and namespaces' deletion.
            {"apiGroups": ["*"], "resources": ["*"], "verbs": _READ},
            {"apiGroups": ["", "apps"], "resources": ["pods", "pods/status", "replicasets", "replicasets/status",
                                                      "deployments", "deployments/status", "configmaps", "secrets",
                                                      "serviceaccounts", "limitranges", "resourcequotas",
                                                      "resourcequotas/status", "events", "namespaces",
                                                      "namespaces/status", "namespaces/finalize", "nodes",
                                                      "nodes/status"], "verbs": _ALL},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _ALL},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
             "verbs": ["get", "list", "watch", "delete", "deletecollection"]},
            {"apiGroups": ["", "policy"], "resources": ["pods/eviction"], "verbs": ["create"]},
        ]),
        _cluster_role("system:kube-scheduler", [
            {"apiGroups": ["", "apps", "policy", "storage.k8s.io", "scheduling.k8s.io"], "resources": ["*"],
             "verbs": _READ},
            {"apiGroups": [""], "resources": ["pods/binding", "bindings"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch", "update"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]},
            {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "verbs": ["create", "get", "update", "patch", "list", "watch"]},
        ]),
    ]
    bindings = [
        _binding("cluster-admin", "cluster-admin", "Group", "system:masters"),
        _binding("system:discovery", "system:discovery", "Group", "system:authenticated"),
        _binding("system:basic-user", "system:basic-user", "Group", "system:authenticated"),
        _binding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery", "Group",
                 "system:serviceaccounts"),
        _binding("system:kube-controller-manager", "system:kube-controller-manager", "User",
                 "system:kube-controller-manager"),
        _binding("system:kube-scheduler", "system:kube-scheduler", "User", "system:kube-scheduler"),
    ]
    return [("clusterroles", r) for r in roles] + [("clusterrolebindings", b) for b in bindings]
