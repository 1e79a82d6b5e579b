"""The kinds picokube serves: group, version, kind, plural, scope, short names, subresources.

This table lists the resources built into picokube: names users type (`po`, `deploy`), URL
paths (`/apis/apps/v1/namespaces/x/deployments`) and kinds. The API server builds its
resource registry (and so discovery) from it, and the typed models take their facts from it.
A client resolving what a user typed must ask the server instead, whose registry may hold
more (`kube.client.discovery.RESTMapper`, which pkctl uses); `resolve_resource` remains for
code and tests that only deal with the built-in kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ResourceInfo", "RESOURCES", "VIRTUAL_KINDS", "resource_for_kind", "resource_for_plural", "resolve_resource"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceInfo:
    """Static facts about one served resource."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    has_status: bool = field(default=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def qualified(self) -> str:
        """`pods`, `deployments.apps`: the spelling used in Status messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def base_path(self, namespace: str | None = None) -> str:
        """The collection URL path, namespaced when `namespace` is given."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        path = f"{self.base_path(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


RESOURCES: tuple[ResourceInfo, ...] = (
    ResourceInfo("", "v1", "Namespace", "namespaces", "namespace", False, ("ns",),
                 subresources=("status", "finalize"), has_status=True),
    ResourceInfo("", "v1", "Node", "nodes", "node", False, ("no",), subresources=("status", "proxy"),
                 has_status=True),
    ResourceInfo("", "v1", "Pod", "pods", "pod", True, ("po",), ("all",),
                 subresources=("status", "binding", "log", "eviction", "ephemeralcontainers", "exec", "attach",
                               "portforward", "proxy"),
                 has_status=True),
    ResourceInfo("", "v1", "Binding", "bindings", "binding", True, verbs=("create",)),
    ResourceInfo("", "v1", "Event", "events", "event", True, ("ev",)),
    ResourceInfo("", "v1", "ConfigMap", "configmaps", "configmap", True, ("cm",)),
    ResourceInfo("", "v1", "Secret", "secrets", "secret", True),
    ResourceInfo("", "v1", "Service", "services", "service", True, ("svc",), ("all",),
                 subresources=("status", "proxy"), has_status=True),
    ResourceInfo("", "v1", "Endpoints", "endpoints", "endpoints", True, ("ep",)),
    ResourceInfo("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", "endpointslice", True),
    ResourceInfo("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", True, ("sa",),
                 subresources=("token",)),
    ResourceInfo("apps", "v1", "Deployment", "deployments", "deployment", True, ("deploy",), ("all",),
                 subresources=("status", "scale"), has_status=True),
    ResourceInfo("apps", "v1", "ReplicaSet", "replicasets", "replicaset", True, ("rs",), ("all",),
                 subresources=("status", "scale"), has_status=True),
    ResourceInfo("apps", "v1", "DaemonSet", "daemonsets", "daemonset", True, ("ds",), ("all",),
                 subresources=("status",), has_status=True),
    ResourceInfo("apps", "v1", "ControllerRevision", "controllerrevisions", "controllerrevision", True),
    ResourceInfo("coordination.k8s.io", "v1", "Lease", "leases", "lease", True),
    ResourceInfo("", "v1", "ReplicationController", "replicationcontrollers", "replicationcontroller", True,
                 ("rc",), ("all",), subresources=("status", "scale"), has_status=True),
    ResourceInfo("apps", "v1", "StatefulSet", "statefulsets", "statefulset", True, ("sts",), ("all",),
                 subresources=("status", "scale"), has_status=True),
    ResourceInfo("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", True,
                 ("pdb",), subresources=("status",), has_status=True),
    ResourceInfo("", "v1", "LimitRange", "limitranges", "limitrange", True, ("limits",)),
    ResourceInfo("", "v1", "ResourceQuota", "resourcequotas", "resourcequota", True, ("quota",),
                 subresources=("status",), has_status=True),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "Role", "roles", "role", True),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", True),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", False),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
                 "clusterrolebinding", False),
    ResourceInfo("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
                 "customresourcedefinition", False, ("crd", "crds"), ("api-extensions",), subresources=("status",),
                 has_status=True),
    ResourceInfo("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass", False, ("pc",)),
    ResourceInfo("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                 "selfsubjectaccessreview", False, verbs=("create",)),
    ResourceInfo("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews",
                 "subjectaccessreview", False, verbs=("create",)),
    ResourceInfo("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                 "selfsubjectrulesreview", False, verbs=("create",)),
    # kubectl 1.27 asks `auth whoami` of v1alpha1/v1beta1 only; the older versions come first so
    # that lookups by plural (the last entry wins) find v1.
    *(ResourceInfo("authentication.k8s.io", version, "SelfSubjectReview", "selfsubjectreviews",
                   "selfsubjectreview", False, verbs=("create",)) for version in ("v1alpha1", "v1beta1", "v1")),
    ResourceInfo("batch", "v1", "Job", "jobs", "job", True, (), ("all",), subresources=("status",),
                 has_status=True),
    ResourceInfo("batch", "v1", "CronJob", "cronjobs", "cronjob", True, ("cj",), ("all",), subresources=("status",),
                 has_status=True),
    ResourceInfo("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume", False, ("pv",),
                 subresources=("status",), has_status=True),
    ResourceInfo("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", True, ("pvc",),
                 subresources=("status",), has_status=True),
    ResourceInfo("storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", False, ("sc",)),
    ResourceInfo("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
                 "certificatesigningrequest", False, ("csr",), subresources=("status", "approval"), has_status=True),
)

# Kinds that are answered, never stored (reviews): the handler computes their status.
VIRTUAL_KINDS = frozenset({"SelfSubjectAccessReview", "SubjectAccessReview", "SelfSubjectRulesReview",
                           "SelfSubjectReview"})

_BY_KIND = {(r.api_version, r.kind): r for r in RESOURCES}
_BY_PLURAL = {(r.group, r.plural): r for r in RESOURCES}


def resource_for_kind(api_version: str, kind: str) -> ResourceInfo | None:
    """The resource serving `kind` in `api_version` (`apps/v1`, `Deployment`), or None."""
    return _BY_KIND.get((api_version, kind))


def resource_for_plural(group: str, plural: str) -> ResourceInfo | None:
    return _BY_PLURAL.get((group, plural))


def resolve_resource(name: str) -> ResourceInfo | None:
    """Resolve what a user typed (`po`, `pods`, `pod`, `Pod`, `deployments.apps`) to a resource."""
    lowered = name.lower()
    base, _, group = lowered.partition(".")
    for r in RESOURCES:
        if group and r.group != group:
            continue
        if base in (r.plural, r.singular, r.kind.lower()) or base in r.short_names:
            return r
    return None
