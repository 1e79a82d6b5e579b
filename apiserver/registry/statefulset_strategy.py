"""Strategies of the ReplicationController and StatefulSet kinds.

Mirrors ValidateReplicationController (pkg/apis/core/validation) and ValidateStatefulSet /
ValidateStatefulSetUpdate (pkg/apis/apps/validation), with upstream's paths and messages:
- both: non-negative replicas and minReadySeconds, a non-empty selector matching the pod
  template's labels, a valid pod template whose restartPolicy is Always and which sets no
  activeDeadlineSeconds; generation tracks the spec;
- ReplicationController: the selector is a label map and may change;
- StatefulSet: podManagementPolicy OrderedReady or Parallel, updateStrategy RollingUpdate
  (partition >= 0) or OnDelete (no rollingUpdate block), revisionHistoryLimit >= 0, claim
  retention Retain or Delete, named volumeClaimTemplates; an update may change only
  replicas, ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and
  minReadySeconds.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.pod_validation import validate_pod_spec
from apiserver.registry.storage_validation import validate_pvc_spec
from apiserver.registry.strategy import Obj, Strategy, validate_object_meta
from apiserver.validation.field import forbidden, invalid, not_supported, required
from kube.errors import FieldError
from kube.selectors import selector_from_label_selector

__all__ = ["ReplicationControllerStrategy", "StatefulSetStrategy"]

_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds")
_STS_FORBIDDEN = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                  "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")


def _non_negative(errs: list[FieldError], path: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        errs.append(invalid(path, value, "must be greater than or equal to 0"))


def _template_errors(kind: str, spec: Obj, matches: Any) -> list[FieldError]:
    """The pod template: present, selected by the selector (`matches(labels)`), valid, restarted Always."""
    template = spec.get("template")
    if not isinstance(template, dict):
        return [required("spec.template")]
    errs: list[FieldError] = []
    labels = (template.get("metadata") or {}).get("labels") or {}
    if matches is not None and not matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    tspec = template.get("spec")
    if not isinstance(tspec, dict):
        return [*errs, required("spec.template.spec")]
    # Mounts may name a volumeClaimTemplate: each becomes a claim volume of the pod, as upstream
    # validates it (the template's own volumes keep their indexes first).
    claims = [{"name": (t.get("metadata") or {}).get("name"), "persistentVolumeClaim": {"claimName": "template"}}
              for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
    given = tspec.get("volumes")
    volumes: list[Any] = given if isinstance(given, list) else []
    errs += validate_pod_spec({**tspec, "volumes": [*volumes, *claims]} if claims else tspec, "spec.template.spec")
    policy = tspec.get("restartPolicy")
    if policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


class _Workload(Strategy):
    tracks_generation = True

    def default_status(self, obj: Obj) -> None:
        obj["status"] = {"replicas": 0}


class ReplicationControllerStrategy(_Workload):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [*errs, required("spec")]
        _non_negative(errs, "spec.replicas", spec.get("replicas"))
        _non_negative(errs, "spec.minReadySeconds", spec.get("minReadySeconds"))
        selector = spec.get("selector")
        matches = None
        if not isinstance(selector, dict) or not selector:
            errs.append(required("spec.selector"))
        else:
            def matches(labels: Obj) -> bool:
                return all(labels.get(k) == v for k, v in selector.items())
        return errs + _template_errors(self.info.kind, spec, matches)


class StatefulSetStrategy(_Workload):
    def validate_kind(self, obj: Obj) -> list[FieldError]:
        errs = validate_object_meta(obj, namespaced=True)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [*errs, required("spec")]
        errs += _policies(spec)
        for field in ("replicas", "minReadySeconds", "revisionHistoryLimit"):
            _non_negative(errs, f"spec.{field}", spec.get(field))
        ordinals = spec.get("ordinals")
        if isinstance(ordinals, dict):
            _non_negative(errs, "spec.ordinals.start", ordinals.get("start"))
        errs += _claim_templates(spec.get("volumeClaimTemplates"))
        selector = spec.get("selector")
        matches = None
        if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errs.append(invalid("spec.selector", selector if isinstance(selector, dict) else None,
                                "empty selector is invalid for statefulset"))
        else:
            try:
                matches = selector_from_label_selector(selector).matches
            except (ValueError, KeyError, TypeError) as e:
                errs.append(FieldError("spec.selector", f"Invalid value: {e}"))
        return errs + _template_errors(self.info.kind, spec, matches)

    def validate_kind_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate_kind(new)
        new_spec, old_spec = new.get("spec"), old.get("spec")
        if isinstance(new_spec, dict) and isinstance(old_spec, dict):
            frozen = [k for k in set(new_spec) | set(old_spec) if k not in _STS_MUTABLE]
            if any(new_spec.get(k) != old_spec.get(k) for k in frozen):
                errs.append(forbidden("spec", _STS_FORBIDDEN))
        return errs


def _policies(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(required("spec.podManagementPolicy", ""))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(invalid("spec.podManagementPolicy", policy,
                            "must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy")
    if isinstance(strategy, dict):
        kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
        if not kind:
            errs.append(required("spec.updateStrategy", ""))
        elif kind == "OnDelete":
            if rolling is not None:
                errs.append(invalid("spec.updateStrategy.rollingUpdate", rolling,
                                    "only allowed for updateStrategy 'RollingUpdate'"))
        elif kind == "RollingUpdate":
            if isinstance(rolling, dict):
                _non_negative(errs, "spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"))
        else:
            errs.append(invalid("spec.updateStrategy", kind, "must be 'RollingUpdate' or 'OnDelete'"))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for field in ("whenDeleted", "whenScaled"):
            value = retention.get(field)
            if value not in ("Retain", "Delete"):
                errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{field}", value,
                                          ["Retain", "Delete"]))
    return errs


def _claim_templates(templates: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, claim in enumerate(templates or [] if isinstance(templates, list) else []):
        name = ((claim.get("metadata") or {}) if isinstance(claim, dict) else {}).get("name")
        if not name:
            errs.append(FieldError(f"spec.volumeClaimTemplates[{i}].metadata.name",
                                   "Required value: name or generateName is required", reason="FieldValueRequired"))
        if isinstance(claim, dict) and isinstance(claim.get("spec"), dict):
            errs += validate_pvc_spec(claim["spec"], f"spec.volumeClaimTemplates[{i}].spec")
    return errs
