"""A small valid object per kind whose schema alone does not say enough to pass validation.

The fuzzer starts a create from one of these (or from the schema when a kind has none), so that
most kinds get stored at least once and their update, patch, status, scale and delete paths are
exercised on objects that exist. Only `spec`-level content lives here; metadata is the fuzzer's.
"""

from __future__ import annotations

import base64
import copy
from functools import cache
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["seed_for"]

_LABELS = {"app": "fuzz"}
_CONTAINER = {"name": "c", "image": "busybox"}
_POD_SPEC: dict[str, Any] = {"containers": [dict(_CONTAINER)]}
_TEMPLATE: dict[str, Any] = {"metadata": {"labels": dict(_LABELS)}, "spec": {**_POD_SPEC}}
_WORKLOAD: dict[str, Any] = {"selector": {"matchLabels": dict(_LABELS)}, "template": _TEMPLATE}
_JOB_TEMPLATE: dict[str, Any] = {"template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}}}

_SEEDS: dict[str, dict[str, Any]] = {
    "Pod": {"spec": _POD_SPEC},
    "ReplicationController": {"spec": {"replicas": 1, "selector": dict(_LABELS), "template": _TEMPLATE}},
    "ReplicaSet": {"spec": {"replicas": 1, **_WORKLOAD}},
    "Deployment": {"spec": {"replicas": 1, **_WORKLOAD}},
    "DaemonSet": {"spec": _WORKLOAD},
    "StatefulSet": {"spec": {"replicas": 1, "serviceName": "s", **_WORKLOAD}},
    "Job": {"spec": _JOB_TEMPLATE},
    "CronJob": {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": _JOB_TEMPLATE}}},
    "Service": {"spec": {"selector": dict(_LABELS), "ports": [{"port": 80}]}},
    "Endpoints": {"subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]},
    "EndpointSlice": {"addressType": "IPv4", "endpoints": [{"addresses": ["10.1.2.3"]}], "ports": [{"port": 80}]},
    "PersistentVolume": {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                  "hostPath": {"path": "/tmp/fuzz"}}},
    "PersistentVolumeClaim": {"spec": {"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}}},
    "ResourceQuota": {"spec": {"hard": {"pods": "10"}}},
    "LimitRange": {"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}},
    "Event": {"involvedObject": {"kind": "Pod", "name": "p", "apiVersion": "v1"}, "reason": "Fuzz",
              "message": "fuzzed", "type": "Normal"},
    "Secret": {"data": {"k": "dmFsdWU="}},
    "ConfigMap": {"data": {"k": "value"}},
    "PodDisruptionBudget": {"spec": {"minAvailable": 1, "selector": {"matchLabels": dict(_LABELS)}}},
    "Role": {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    "ClusterRole": {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    "RoleBinding": {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                    "subjects": [{"kind": "User", "name": "fuzz", "apiGroup": "rbac.authorization.k8s.io"}]},
    "ClusterRoleBinding": {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                       "name": "r"},
                           "subjects": [{"kind": "User", "name": "fuzz", "apiGroup": "rbac.authorization.k8s.io"}]},
    "PriorityClass": {"value": 1000},
    "StorageClass": {"provisioner": "example.com/fuzz"},
    "ControllerRevision": {"revision": 1, "data": {"spec": {}}},
    "Lease": {"spec": {"holderIdentity": "fuzz", "leaseDurationSeconds": 15}},
    "Node": {"spec": {}},
    "Namespace": {},
    "ServiceAccount": {},
    "SelfSubjectAccessReview": {"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}},
    "SelfSubjectRulesReview": {"spec": {"namespace": "default"}},
    "SelfSubjectReview": {},
    "Binding": {"target": {"kind": "Node", "name": "node-1", "apiVersion": "v1"}},
    "Eviction": {},
    "TokenRequest": {"spec": {"audiences": ["fuzz"], "expirationSeconds": 3600}},
    "Scale": {"spec": {"replicas": 2}},
}


def _crd(group: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0}, "mode": {"type": "string", "enum": ["a", "b"]}}}}}
    return {"spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


@cache
def _certificate_request() -> str:
    """A real PEM certificate request (base64, as the API carries it): a CSR is refused without one."""
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fuzz")])).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def seed_for(kind: str, name: str) -> dict[str, Any] | None:
    """A fresh copy of the kind's seed (fields beside `metadata`), or None when it has none.

    A CustomResourceDefinition's name must be `<plural>.<group>`, so its seed is built for `name`.
    """
    if kind == "CustomResourceDefinition":
        return _crd(name.split(".", 1)[1]) if "." in name else None
    if kind == "CertificateSigningRequest":
        return {"spec": {"request": _certificate_request(), "signerName": "kubernetes.io/kube-apiserver-client",
                         "usages": ["client auth"], "expirationSeconds": 3600}}
    found = _SEEDS.get(kind)
    return copy.deepcopy(found) if found is not None else None
