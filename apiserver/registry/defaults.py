"""Server-side defaulting: the values Kubernetes fills in for fields a client left out.

Mirrors the SetDefaults_* functions of k8s.io/kubernetes/pkg/apis/{core,apps}/v1 for the
fields picokube's controllers and kubelet read, so a stored object always says what the
cluster will do with it (`kubectl get -o yaml` shows `strategy.type: RollingUpdate`, a
ReplicaSet's template shows `restartPolicy: Always`). Defaulting runs on every create and
every update of the main resource, as upstream defaults every decoded body; fields of the
wrong type are left alone for validation to report. Defaults never overwrite a value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["apply_defaults", "default_pod_spec"]

Obj = dict[str, Any]


def _child(parent: Obj, key: str) -> Obj | None:
    """parent[key] as a dict, created when missing; None when it holds something else."""
    value = parent.setdefault(key, {})
    return value if isinstance(value, dict) else None


def _image_pull_policy(image: Any) -> str:
    """Always for `:latest` or an untagged image (by name, not digest), else IfNotPresent."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    last = text.rsplit("/", 1)[-1]
    return "Always" if ":" not in last or last.endswith(":latest") else "IfNotPresent"


def _default_container(c: Obj) -> None:
    c.setdefault("imagePullPolicy", _image_pull_policy(c.get("image")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    for port in c.get("ports") or [] if isinstance(c.get("ports"), list) else []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec and SetDefaults_Container for a pod or a pod template's spec."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        for c in containers if isinstance(containers, list) else []:
            if isinstance(c, dict):
                _default_container(c)


def _default_template(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def _default_pod(obj: Obj) -> None:
    if isinstance(obj.get("spec"), dict):
        default_pod_spec(obj["spec"])


def _default_replicaset(obj: Obj) -> None:
    if not isinstance(spec := obj.get("spec"), dict):
        return
    spec.setdefault("replicas", 1)
    _default_template(spec)


def _default_deployment(obj: Obj) -> None:
    if not isinstance(spec := obj.get("spec"), dict):
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


_DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "Pod": _default_pod,
    "ReplicaSet": _default_replicaset,
    "Deployment": _default_deployment,
}


def apply_defaults(kind: str, obj: Obj) -> None:
    """Fill in the defaults of `kind` in place (a no-op for kinds without any)."""
    if (defaulter := _DEFAULTERS.get(kind)) is not None:
        defaulter(obj)
