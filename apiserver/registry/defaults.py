"""Server-side defaulting: the values Kubernetes fills in for fields a client left out.

Mirrors the SetDefaults_* functions (and the declarative `+default` markers) of
k8s.io/kubernetes/pkg/apis/{core,apps,scheduling,discovery}/v1 for every kind served, so a stored
object always says what the cluster will do with it (`kubectl get -o yaml` shows
`strategy.type: RollingUpdate`, a probe's `periodSeconds: 10`, a Secret's `type: Opaque`)
and two clients describing the same intent store the same object (a pod template's hash
matches across a rollback). Pod specs are defaulted by `pod_defaults`. Defaulting runs on
every create and every update of the main resource, as upstream defaults every decoded body;
fields of the wrong type are left alone for validation to report. Defaults never overwrite
a value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.registry.cronjob_defaults import default_cronjob
from apiserver.registry.job_defaults import default_job
from apiserver.registry.pod_defaults import default_pod_only, default_pod_spec
from apiserver.registry.storage_defaults import (
    default_persistent_volume,
    default_persistent_volume_claim,
    default_storage_class,
)
from apiserver.registry.workload_defaults import default_replication_controller, default_stateful_set

__all__ = ["apply_defaults", "default_pod_spec"]

Obj = dict[str, Any]


def _child(parent: Obj, key: str) -> Obj | None:
    """parent[key] as a dict, created when missing; None when it holds something else."""
    value = parent.setdefault(key, {})
    return value if isinstance(value, dict) else None


def _spec(obj: Obj) -> Obj | None:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else None


def _default_template(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def _default_pod(obj: Obj) -> None:
    if (spec := _spec(obj)) is not None:
        default_pod_spec(spec)
        default_pod_only(spec)


def _default_replicaset(obj: Obj) -> None:
    if (spec := _spec(obj)) is not None:
        spec.setdefault("replicas", 1)
        _default_template(spec)


def _default_daemonset(obj: Obj) -> None:
    """SetDefaults_DaemonSet: RollingUpdate with maxUnavailable 1 and maxSurge 0; 10 revisions kept."""
    if (spec := _spec(obj)) is None:
        return
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = _child(spec, "updateStrategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate" and (rolling := _child(strategy, "rollingUpdate")) is not None:
            rolling.setdefault("maxUnavailable", 1)
            rolling.setdefault("maxSurge", 0)
    _default_template(spec)


def _default_deployment(obj: Obj) -> None:
    if (spec := _spec(obj)) is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    if (strategy := _child(spec, "strategy")) is not None:
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate" and (rolling := _child(strategy, "rollingUpdate")) is not None:
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
    _default_template(spec)


def _default_secret(obj: Obj) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _default_namespace(obj: Obj) -> None:
    # Every namespace carries its name as a label, so selectors can pick namespaces by name.
    meta = obj.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
        labels = meta.get("labels")
        if labels is None:
            labels = meta["labels"] = {}
        if isinstance(labels, dict):
            labels["kubernetes.io/metadata.name"] = meta["name"]


def _default_node(obj: Obj) -> None:
    status = obj.get("status")
    if isinstance(status, dict) and isinstance(status.get("capacity"), dict) and status.get("allocatable") is None:
        status["allocatable"] = dict(status["capacity"])


def _default_limit_range(obj: Obj) -> None:
    spec = _spec(obj)
    for item in (spec or {}).get("limits") or [] if isinstance((spec or {}).get("limits"), list) else []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default, request = item.setdefault("default", {}), item.setdefault("defaultRequest", {})
        if not isinstance(default, dict) or not isinstance(request, dict):
            continue
        for name, value in (item.get("max") or {}).items() if isinstance(item.get("max"), dict) else ():
            default.setdefault(name, value)
        for name, value in default.items():
            request.setdefault(name, value)
        for name, value in (item.get("min") or {}).items() if isinstance(item.get("min"), dict) else ():
            request.setdefault(name, value)


def _default_priority_class(obj: Obj) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


_CLIENT_IP_TIMEOUT_SECONDS = 10800  # v1.DefaultClientIPServiceAffinitySeconds: three hours


def _default_service(obj: Obj) -> None:
    """SetDefaults_Service; the IP family fields are the allocator's (see `service_ip_families`)."""
    if (spec := _spec(obj)) is None:
        return
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": _CLIENT_IP_TIMEOUT_SECONDS}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or [] if isinstance(spec.get("ports"), list) else []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    kind = spec["type"]
    externally_accessible = kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and spec.get("externalIPs"))
    if externally_accessible and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec["internalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _default_endpoints(obj: Obj) -> None:
    for subset in obj.get("subsets") or [] if isinstance(obj.get("subsets"), list) else []:
        for port in (subset.get("ports") or []) if isinstance(subset, dict) else []:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def _default_endpoint_slice(obj: Obj) -> None:
    for port in obj.get("ports") or [] if isinstance(obj.get("ports"), list) else []:
        if isinstance(port, dict):
            port.setdefault("name", "")
            port.setdefault("protocol", "TCP")


_DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "Pod": _default_pod,
    "ReplicaSet": _default_replicaset,
    "Deployment": _default_deployment,
    "Secret": _default_secret,
    "Namespace": _default_namespace,
    "Node": _default_node,
    "LimitRange": _default_limit_range,
    "PriorityClass": _default_priority_class,
    "Service": _default_service,
    "Endpoints": _default_endpoints,
    "EndpointSlice": _default_endpoint_slice,
    "DaemonSet": _default_daemonset,
    "ReplicationController": default_replication_controller,
    "StatefulSet": default_stateful_set,
    "Job": default_job,
    "CronJob": default_cronjob,
    "PersistentVolume": default_persistent_volume,
    "PersistentVolumeClaim": default_persistent_volume_claim,
    "StorageClass": default_storage_class,
}


def apply_defaults(kind: str, obj: Obj) -> None:
    """Fill in the defaults of `kind` in place (a no-op for kinds without any)."""
    if (defaulter := _DEFAULTERS.get(kind)) is not None:
        defaulter(obj)
