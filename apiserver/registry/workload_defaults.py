"""Defaults of the ReplicationController and StatefulSet kinds.

Mirrors SetDefaults_ReplicationController (pkg/apis/core/v1/defaults.go) and
SetDefaults_StatefulSet (pkg/apis/apps/v1/defaults.go):
- ReplicationController: replicas 1; an empty selector becomes the template's labels, and so
  do the controller's own labels when it has none;
- StatefulSet: replicas 1, podManagementPolicy OrderedReady, updateStrategy RollingUpdate with
  partition 0, revisionHistoryLimit 10, persistentVolumeClaimRetentionPolicy Retain/Retain.
Pod templates are defaulted as every pod spec. Values present are never overwritten; fields
of the wrong type are left for validation.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.pod_defaults import default_pod_spec
from apiserver.registry.storage_defaults import default_pvc_spec

__all__ = ["default_replication_controller", "default_stateful_set"]

Obj = dict[str, Any]


def _template(spec: Obj) -> Obj | None:
    template = spec.get("template")
    if not isinstance(template, dict):
        return None
    if isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])
    return template


def default_replication_controller(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = _template(spec)
    meta = template.get("metadata") if template is not None else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        own = obj.setdefault("metadata", {})
        if isinstance(own, dict) and not own.get("labels"):
            own["labels"] = dict(labels)
    spec.setdefault("replicas", 1)


def default_stateful_set(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    _template(spec)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(policy, dict):
        for field in ("whenDeleted", "whenScaled"):
            if not policy.get(field):
                policy[field] = "Retain"
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    templates = spec.get("volumeClaimTemplates")
    for template in templates if isinstance(templates, list) else []:
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pvc_spec(template["spec"])
            template.setdefault("status", {"phase": "Pending"})
