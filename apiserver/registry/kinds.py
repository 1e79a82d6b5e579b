"""The strategies of the kinds that need more than the default behaviour."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

from apiserver.apiextensions.crd_strategy import CRDStrategy
from apiserver.registry.cronjob_strategy import CronJobStrategy
from apiserver.registry.csr_strategy import CertificateSigningRequestStrategy
from apiserver.registry.daemonset_strategy import ControllerRevisionStrategy, DaemonSetStrategy
from apiserver.registry.defaults import apply_defaults
from apiserver.registry.ephemeral_validation import (
    validate_ephemeral_containers,
    validate_ephemeral_containers_create,
    validate_ephemeral_containers_update,
)
from apiserver.registry.job_strategy import JobStrategy
from apiserver.registry.pdb_strategy import PodDisruptionBudgetStrategy
from apiserver.registry.pod_validation import validate_pod_spec, validate_pod_spec_update
from apiserver.registry.service import EndpointSliceStrategy, EndpointsStrategy, ServiceStrategy
from apiserver.registry.statefulset_strategy import ReplicationControllerStrategy, StatefulSetStrategy
from apiserver.registry.storage_strategy import (
    PersistentVolumeClaimStrategy,
    PersistentVolumeStrategy,
    StorageClassStrategy,
)
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from apiserver.registry.workload_validation import validate_deployment_spec
from apiserver.validation.config_data import (
    merge_string_data,
    validate_config_map,
    validate_config_map_update,
    validate_secret,
    validate_secret_update,
)
from apiserver.validation.field import go_label_selector, invalid
from apiserver.validation.schema_checks import merge_errors
from kube.errors import FieldError
from kube.qos import qos_class
from kube.resources import RESOURCES, ResourceInfo

__all__ = ["EPHEMERAL_CONTAINERS", "strategy_for", "PodStrategy", "NamespaceStrategy", "WorkloadStrategy",
           "SecretStrategy", "ConfigMapStrategy"]

EPHEMERAL_CONTAINERS = "ephemeralcontainers"
"""The pods subresource through which ephemeral containers are added (and nothing else changes)."""


def _mapping(container: Obj, field: str) -> dict[str, Any] | None:
    resources = container.get("resources")
    value = resources.get(field) if isinstance(resources, dict) else None
    return value if isinstance(value, dict) else None


class PodStrategy(Strategy):
    waits_for_graceful_termination = True
    selectable_fields: ClassVar[Mapping[str, str]] = {
        "spec.nodeName": "spec.nodeName", "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName", "spec.hostNetwork": "spec.hostNetwork",
        "spec.restartPolicy": "spec.restartPolicy", "status.phase": "status.phase",
        "status.podIP": "status.podIP", "status.nominatedNodeName": "status.nominatedNodeName",
    }

    def default_status(self, obj: Obj) -> None:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        containers = [c for field in ("initContainers", "containers") for c in (spec.get(field) or [])
                      if isinstance(c, dict)] if isinstance(spec, dict) else []
        try:
            qos = qos_class((_mapping(c, "requests"), _mapping(c, "limits")) for c in containers)
        except (ValueError, TypeError):
            qos = "BestEffort"  # malformed quantities: validation reports them
        obj["status"] = {"phase": "Pending", "qosClass": qos}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        return errs + validate_pod_spec(spec, "spec") + validate_ephemeral_containers(spec)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec")
        create_only = validate_ephemeral_containers_create(spec) if isinstance(spec, dict) else []
        return super().validate(obj) + create_only

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate_kind(new)
        return errs + validate_pod_spec_update(new, old)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource != EPHEMERAL_CONTAINERS:
            super().prepare_for_update(new, old, subresource=subresource)
            return
        # dropNonEphemeralContainerUpdates: the stored pod, with the submitted ephemeral containers.
        submitted = (new.get("spec") or {}).get("ephemeralContainers") if isinstance(new.get("spec"), dict) else None
        resource_version = (new.get("metadata") or {}).get("resourceVersion")
        new.clear()
        new.update(copy.deepcopy(old))
        new["metadata"]["resourceVersion"] = resource_version
        if submitted is None:
            new.setdefault("spec", {}).pop("ephemeralContainers", None)
        else:
            new.setdefault("spec", {})["ephemeralContainers"] = submitted
        apply_defaults(self.info.kind, new)

    def validate_subresource_update(self, new: Obj, old: Obj, *, subresource: str) -> list[FieldError]:
        if subresource != EPHEMERAL_CONTAINERS:
            return super().validate_subresource_update(new, old, subresource=subresource)
        return merge_errors(self.validate_kind(new) + validate_ephemeral_containers_update(new, old),
                            self._schema_errors(new))

    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        # An unscheduled or finished pod has nothing running to stop: delete it at once.
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(0, requested)
        return int(spec.get("terminationGracePeriodSeconds", 30))


class NamespaceStrategy(Strategy):
    selectable_fields: ClassVar[Mapping[str, str]] = {"status.phase": "status.phase"}

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"phase": "Active"}

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return validate_object_meta(obj, namespaced=False, label_name=True)

    def holds_deletion(self, obj: Obj) -> bool:
        return bool((obj.get("spec") or {}).get("finalizers"))

    def prepare_for_delete(self, obj: Obj) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        if subresource == "finalize":  # only spec.finalizers changes, as upstream's finalize REST
            finalizers = (new.get("spec") or {}).get("finalizers") or []
            new.clear()
            new.update(copy.deepcopy(old))
            new.setdefault("spec", {})["finalizers"] = list(finalizers)
            return
        super().prepare_for_update(new, old, subresource=subresource)
        if old.get("status", {}).get("phase") == "Terminating":
            new.setdefault("status", {})["phase"] = "Terminating"


class NodeStrategy(Strategy):
    selectable_fields: ClassVar[Mapping[str, str]] = {"spec.unschedulable": "spec.unschedulable"}


class EventStrategy(Strategy):
    selectable_fields: ClassVar[Mapping[str, str]] = {
        "involvedObject.kind": "involvedObject.kind", "involvedObject.namespace": "involvedObject.namespace",
        "involvedObject.name": "involvedObject.name", "involvedObject.uid": "involvedObject.uid",
        "involvedObject.apiVersion": "involvedObject.apiVersion",
        "involvedObject.resourceVersion": "involvedObject.resourceVersion",
        "involvedObject.fieldPath": "involvedObject.fieldPath", "reason": "reason", "type": "type",
        "source": "source.component", "reportingComponent": "reportingComponent",
    }


class WorkloadStrategy(Strategy):
    """Deployments and ReplicaSets: generation tracks spec; the template must match the selector."""

    tracks_generation = True

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {}

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        from kube.selectors import selector_from_label_selector

        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [*errs, FieldError("spec", "Required value", reason="FieldValueRequired")]
        replicas = spec.get("replicas")
        if isinstance(replicas, int) and replicas < 0:
            errs.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
        selector = spec.get("selector")
        raw_template = spec.get("template")
        template: Obj = raw_template if isinstance(raw_template, dict) else {}
        if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errs.append(FieldError("spec.selector", "Required value", reason="FieldValueRequired"))
        else:
            try:
                sel = selector_from_label_selector(selector)
                labels = (template.get("metadata") or {}).get("labels") or {}
                if not sel.matches(labels):
                    errs.append(invalid("spec.template.metadata.labels", labels,
                                        "`selector` does not match template `labels`"))
            except (ValueError, KeyError, TypeError) as e:
                errs.append(FieldError("spec.selector", f"Invalid value: {e}"))
        tspec = template.get("spec")
        if not isinstance(tspec, dict):
            errs.append(FieldError("spec.template.spec", "Required value", reason="FieldValueRequired"))
        else:
            errs += validate_pod_spec(tspec, "spec.template.spec")
        if self.info.kind == "Deployment":
            errs += validate_deployment_spec(spec)
        return errs

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate_kind(new)
        if self.info.kind == "Deployment" or self.info.kind == "ReplicaSet":
            old_sel, new_sel = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
            if old_sel is not None and new_sel != old_sel:
                errs.append(FieldError("spec.selector",
                                       f"Invalid value: {go_label_selector(new_sel)}: field is immutable"))
        return errs


class SecretStrategy(Strategy):
    """Secrets: `stringData` is folded into `data` before anything reads the object; type defaults to Opaque."""

    selectable_fields: ClassVar[dict[str, str]] = {"type": "type"}

    def prepare_for_create(self, obj: Obj) -> None:
        merge_string_data(obj)
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: Obj, old: Obj, *, subresource: str | None) -> None:
        merge_string_data(new)
        super().prepare_for_update(new, old, subresource=subresource)

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return super().validate_kind(obj) + validate_secret(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_kind(new) + validate_secret_update(new, old)


class ConfigMapStrategy(Strategy):
    """ConfigMaps: valid keys, at most 1 MiB of data, frozen once immutable."""

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        return super().validate_kind(obj) + validate_config_map(obj)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return super().validate_kind(new) + validate_config_map_update(new, old)


class RBACStrategy(Strategy):
    """RBAC objects are named by path segment (`system:kube-scheduler`), not DNS subdomain."""

    def validate_kind(self, obj: Obj) -> list[FieldError]:
        name = (obj.get("metadata") or {}).get("name")
        if not name:
            return [FieldError("metadata.name", "Required value: name or generateName is required",
                               reason="FieldValueRequired")]
        if name in (".", "..") or "/" in name or "%" in name:
            return [FieldError("metadata.name", f'Invalid value: "{name}": may not contain \'/\' or \'%\'')]
        return []


def strategy_for(info: ResourceInfo) -> Strategy:
    by_kind: dict[str, type[Strategy]] = {
        "Pod": PodStrategy, "Namespace": NamespaceStrategy, "Node": NodeStrategy, "Event": EventStrategy,
        "Deployment": WorkloadStrategy, "ReplicaSet": WorkloadStrategy,
        "Role": RBACStrategy, "ClusterRole": RBACStrategy, "RoleBinding": RBACStrategy,
        "ClusterRoleBinding": RBACStrategy, "Secret": SecretStrategy, "ConfigMap": ConfigMapStrategy,
        "CustomResourceDefinition": CRDStrategy, "Service": ServiceStrategy, "Endpoints": EndpointsStrategy,
        "EndpointSlice": EndpointSliceStrategy,
        "DaemonSet": DaemonSetStrategy, "ControllerRevision": ControllerRevisionStrategy,
        "ReplicationController": ReplicationControllerStrategy, "StatefulSet": StatefulSetStrategy,
        "PodDisruptionBudget": PodDisruptionBudgetStrategy,
        "Job": JobStrategy,
        "CronJob": CronJobStrategy,
        "PersistentVolume": PersistentVolumeStrategy,
        "PersistentVolumeClaim": PersistentVolumeClaimStrategy,
        "StorageClass": StorageClassStrategy,
        "CertificateSigningRequest": CertificateSigningRequestStrategy,
    }
    return by_kind.get(info.kind, Strategy)(info)


ALL_STRATEGIES = {r.plural: strategy_for(r) for r in RESOURCES}
