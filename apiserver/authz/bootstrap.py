"""The bootstrap RBAC policy the API server ensures at start, as kube-apiserver's
bootstrappolicy does: cluster-admin for system:masters; discovery and self-review for every
authenticated user; health and version for everyone (system:public-info-viewer); service
account issuer discovery for every service account; the controller-manager's,
scheduler's and proxies' (system:node-proxier) roles; the cluster DNS's (system:kube-dns, plus a Role
in kube-system to publish the kube-dns Service's endpoints); and the user-facing `admin`, `edit` and
`view` roles.

`admin`, `edit` and `view` carry no rules of their own: each has an aggregationRule, and the
clusterrole-aggregation controller fills its rules from the ClusterRoles labelled
`rbac.authorization.k8s.io/aggregate-to-<role>: "true"` (the `system:aggregate-to-*` roles
below, and anything a user adds). `edit` is itself labelled aggregate-to-admin and `view`
aggregate-to-edit, so admin ⊇ edit ⊇ view, as upstream.
"""

from __future__ import annotations

from typing import Any

__all__ = ["bootstrap_policy"]

Obj = dict[str, Any]
_READ = ["get", "list", "watch"]
_ALL = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


_AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"
_WRITE = ["create", "update", "patch", "delete", "deletecollection"]


def _metadata(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def _cluster_role(name: str, rules: list[Obj], *, aggregate_to: str | None = None,
                  aggregates: str | None = None) -> Obj:
    """A ClusterRole; `aggregate_to` labels it into that role, `aggregates` makes it an aggregated role."""
    role: Obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": _metadata(name, {f"{_AGGREGATE}{aggregate_to}": "true"} if aggregate_to else None),
                 "rules": rules}
    if aggregates:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {f"{_AGGREGATE}{aggregates}": "true"}}]}
    return role


def _binding(name: str, role: str, *subjects: tuple[str, str]) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": _metadata(name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": subject}
                         for kind, subject in subjects]}


def _rule(verbs: list[str], groups: list[str], resources: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def _user_facing_roles() -> list[Obj]:
    """admin, edit, view and the system:aggregate-to-* roles that fill them: upstream's rules,
    less those for feature-gated groups (resource.k8s.io), so kubectl auth can-i agrees."""
    view_rules = [
        _rule(_READ, [""], ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                            "services", "services/status", "endpoints", "persistentvolumeclaims",
                            "persistentvolumeclaims/status", "configmaps"]),
        _rule(_READ, [""], ["limitranges", "resourcequotas", "bindings", "pods/status", "resourcequotas/status",
                            "namespaces/status", "replicationcontrollers/status", "pods/log"]),
        _rule(_READ, [""], ["namespaces"]),
        _rule(_READ, ["", "events.k8s.io"], ["events"]),
        _rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
        _rule(_READ, ["apps"], ["controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
                                "daemonsets", "daemonsets/status", "deployments", "deployments/status",
                                "deployments/scale", "replicasets", "replicasets/status", "replicasets/scale"]),
        _rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        _rule(_READ, ["batch"], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
        _rule(_READ, ["extensions"], ["daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                                      "deployments/status", "ingresses", "ingresses/status", "replicasets",
                                      "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
                                      "networkpolicies"]),
        _rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        _rule(_READ, ["networking.k8s.io"], ["networkpolicies", "ingresses", "ingresses/status"]),
    ]
    edit_rules = [
        _rule(_READ, [""], ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets",
                            "services/proxy"]),
        _rule(["impersonate"], [""], ["serviceaccounts"]),
        _rule(_WRITE, [""], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
        _rule(["create"], [""], ["pods/eviction"]),
        _rule(_WRITE, [""], ["replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                             "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"]),
        _rule(["create"], [""], ["serviceaccounts/token"]),
        _rule(_WRITE, ["", "events.k8s.io"], ["events"]),
        _rule(_WRITE, ["apps"], ["statefulsets", "statefulsets/scale", "daemonsets", "deployments",
                                 "deployments/scale", "deployments/rollback", "replicasets", "replicasets/scale"]),
        _rule(_WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
        _rule(_WRITE, ["batch"], ["jobs", "cronjobs"]),
        _rule(_WRITE, ["extensions"], ["daemonsets", "deployments", "deployments/scale", "deployments/rollback",
                                       "ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale",
                                       "networkpolicies"]),
        _rule(_WRITE, ["policy"], ["poddisruptionbudgets"]),
        _rule(_WRITE, ["networking.k8s.io"], ["networkpolicies", "ingresses"]),
        _rule(_ALL, ["coordination.k8s.io"], ["leases"]),
    ]
    admin_rules = [
        _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
        _rule(_ALL, ["rbac.authorization.k8s.io"], ["roles", "rolebindings"]),
    ]
    return [
        _cluster_role("admin", [], aggregates="admin"),
        _cluster_role("edit", [], aggregate_to="admin", aggregates="edit"),
        _cluster_role("view", [], aggregate_to="edit", aggregates="view"),
        _cluster_role("system:aggregate-to-admin", admin_rules, aggregate_to="admin"),
        _cluster_role("system:aggregate-to-edit", edit_rules, aggregate_to="edit"),
        _cluster_role("system:aggregate-to-view", view_rules, aggregate_to="view"),
    ]


def bootstrap_policy() -> list[tuple[str, Obj]]:
    """(plural, object) pairs, roles before bindings; namespaced ones carry their namespace."""
    roles = [
        _cluster_role("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                                        {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        _cluster_role("system:discovery", [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi",
                                                                "/openapi/*", "/version", "/version/", "/healthz",
                                                                "/livez", "/readyz"], "verbs": ["get"]}]),
        _cluster_role("system:service-account-issuer-discovery", [
            {"nonResourceURLs": ["/.well-known/openid-configuration", "/.well-known/openid-configuration/",
                                 "/openid/v1/jwks", "/openid/v1/jwks/"], "verbs": ["get"]}]),
        _cluster_role("system:basic-user", [
            _rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        _cluster_role("system:public-info-viewer", [
            {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        _cluster_role("system:kube-controller-manager", [
            # Its controllers together read everything and manage workloads, their pods, events,
            # leases for leader election, nodes' taints and status, and namespaces' deletion.
            {"apiGroups": ["*"], "resources": ["*"], "verbs": _READ},
            # The garbage collector and namespace deletion remove (and orphan) objects of any kind,
            # custom resources included.
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["delete", "deletecollection", "patch"]},
            {"apiGroups": ["", "apps"], "resources": ["pods", "pods/status", "replicasets", "replicasets/status",
                                                      "deployments", "deployments/status", "configmaps", "secrets",
                                                      "serviceaccounts", "limitranges", "resourcequotas",
                                                      "resourcequotas/status", "events", "namespaces",
                                                      "namespaces/status", "namespaces/finalize", "nodes",
                                                      "nodes/status", "services", "services/status",
                                                      "endpoints"], "verbs": _ALL},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _ALL},
            # daemon-set-controller: its DaemonSets' status, their pods and their history.
            {"apiGroups": ["apps"], "resources": ["daemonsets", "daemonsets/status", "daemonsets/finalizers",
                                                  "controllerrevisions"], "verbs": _ALL},
            {"apiGroups": ["", "apps"], "resources": ["replicationcontrollers", "replicationcontrollers/status",
                                                      "statefulsets", "statefulsets/status", "controllerrevisions"],
             "verbs": _ALL},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _ALL},
            {"apiGroups": ["batch"], "resources": ["jobs", "jobs/status", "jobs/finalizers"], "verbs": _ALL},
            {"apiGroups": ["batch"], "resources": ["cronjobs", "cronjobs/status", "cronjobs/finalizers"],
             "verbs": _ALL},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
             "verbs": ["get", "list", "watch", "delete", "deletecollection"]},
            # clusterrole-aggregation writes aggregated roles' rules (upstream grants it escalate too).
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
             "verbs": ["get", "list", "watch", "update", "patch", "escalate"]},
            {"apiGroups": ["", "policy"], "resources": ["pods/eviction"], "verbs": ["create"]},
            # The disruption controller writes budgets' status.
            {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets/status"], "verbs": ["update"]},
            # persistentvolume-binder, the local-path provisioner and the protection controllers.
            {"apiGroups": [""], "resources": ["persistentvolumes", "persistentvolumes/status", "persistentvolumeclaims",
                                              "persistentvolumeclaims/status"], "verbs": _ALL},
            # The default StorageClass its --default-storage-class names (upstream's addon manager creates it).
            {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["create"]},
            # csrapproving and csrsigning (upstream's certificate-controller), which ask whether a
            # requester may have its request approved; the token cleaner removes expired tokens.
            {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval",
                                                                 "certificatesigningrequests/status"],
             "verbs": ["update"]},
            {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve", "sign"],
             "resourceNames": ["kubernetes.io/*"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ]),
        # What a joining kubelet's bootstrap token may do: ask for its client certificate.
        _cluster_role("system:node-bootstrapper", [
            _rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"])]),
        # csrapproving approves a node's request when its requester holds these (kubeadm binds them).
        _cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient", [
            _rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/nodeclient"])]),
        _cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", [
            _rule(["create"], ["certificates.k8s.io"], ["certificatesigningrequests/selfnodeclient"])]),
        *(_cluster_role(f"system:certificates.k8s.io:{signer}-approver", [
            {**_rule(["approve"], ["certificates.k8s.io"], ["signers"]), "resourceNames": [f"kubernetes.io/{signer}"]}])
          for signer in ("kube-apiserver-client", "kube-apiserver-client-kubelet", "kubelet-serving")),
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
        # What a node's service proxy reads (upstream's system:node-proxier, bound to kube-proxy).
        _cluster_role("system:node-proxier", [
            _rule(["list", "watch"], [""], ["services", "endpoints"]),
            _rule(_READ, [""], ["nodes"]),
            _rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"]),
            _rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
        ]),
        # What the cluster DNS reads (upstream's system:kube-dns, with EndpointSlices as CoreDNS's role has).
        _cluster_role("system:kube-dns", [
            _rule(["list", "watch"], [""], ["endpoints", "services"]),
            _rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"]),
        ]),
        # Volume binding: the scheduler writes the selected node on claims (bound to it below).
        _cluster_role("system:volume-scheduler", [
            _rule([*_READ, "update", "patch"], [""], ["persistentvolumes"]),
            _rule(_READ, ["storage.k8s.io"], ["storageclasses"]),
            _rule([*_READ, "update", "patch"], [""], ["persistentvolumeclaims"]),
        ]),
        # For an external provisioner's identity, as upstream (picokube's local-path provisioner
        # runs in the controller-manager).
        _cluster_role("system:persistent-volume-provisioner", [
            _rule(["get", "list", "watch", "create", "delete"], [""], ["persistentvolumes"]),
            _rule(["get", "list", "watch", "update"], [""], ["persistentvolumeclaims"]),
            _rule(_READ, ["storage.k8s.io"], ["storageclasses"]),
            _rule(["watch"], [""], ["events"]),
            _rule(["create", "update", "patch"], ["", "events.k8s.io"], ["events"]),
        ]),
        # Components send their spans to the API server's trace collector (apiserver/endpoints/traces.py).
        _cluster_role("system:picokube:trace-writer", [{"nonResourceURLs": ["/v1/traces"], "verbs": ["post"]}]),
        *_user_facing_roles(),
    ]
    bindings = [
        _binding("cluster-admin", "cluster-admin", ("Group", "system:masters")),
        _binding("system:discovery", "system:discovery", ("Group", "system:authenticated")),
        _binding("system:basic-user", "system:basic-user", ("Group", "system:authenticated")),
        _binding("system:public-info-viewer", "system:public-info-viewer", ("Group", "system:authenticated"),
                 ("Group", "system:unauthenticated")),
        _binding("system:service-account-issuer-discovery", "system:service-account-issuer-discovery",
                 ("Group", "system:serviceaccounts")),
        _binding("system:kube-controller-manager", "system:kube-controller-manager",
                 ("User", "system:kube-controller-manager")),
        _binding("system:kube-scheduler", "system:kube-scheduler", ("User", "system:kube-scheduler")),
        _binding("system:volume-scheduler", "system:volume-scheduler", ("User", "system:kube-scheduler")),
        # picokube's proxy may run with its node's credentials or as system:kube-proxy.
        _binding("system:node-proxier", "system:node-proxier", ("User", "system:kube-proxy"),
                 ("Group", "system:nodes")),
        _binding("system:picokube:trace-writer", "system:picokube:trace-writer",
                 ("User", "system:kube-controller-manager"), ("User", "system:kube-scheduler"),
                 ("User", "system:kube-proxy"), ("User", "system:kube-dns"), ("Group", "system:nodes")),
        _kube_dns_binding(),
    ]
    return ([("clusterroles", r) for r in roles] + [("clusterrolebindings", b) for b in bindings]
            + _kube_dns_publisher())


def _kube_dns_binding() -> Obj:
    """system:kube-dns for the kube-dns ServiceAccount (upstream's subject) and picokube's DNS user."""
    binding = _binding("system:kube-dns", "system:kube-dns", ("User", "system:kube-dns"))
    binding["subjects"].insert(0, {"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"})
    return binding


def _kube_dns_publisher() -> list[tuple[str, Obj]]:
    """A Role and RoleBinding in kube-system: the DNS server keeps the kube-dns Service and its
    Endpoints and EndpointSlice (it runs as a process, not as the pods a selector would find)."""
    name, names = "system:picokube:kube-dns", ["kube-dns"]
    meta = {**_metadata(name), "namespace": "kube-system"}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta, "rules": [
        _rule(["create"], [""], ["services", "endpoints"]),
        _rule(["create"], ["discovery.k8s.io"], ["endpointslices"]),
        {**_rule(["get", "update", "patch"], [""], ["services", "endpoints"]), "resourceNames": names},
        {**_rule(["get", "update", "patch"], ["discovery.k8s.io"], ["endpointslices"]), "resourceNames": names},
    ]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": dict(meta),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-dns"}]}
    return [("roles", role), ("rolebindings", binding)]
