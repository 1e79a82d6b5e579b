"""Validation of DaemonSets and ControllerRevisions, with upstream's paths and messages.

Mirrors ValidateDaemonSetSpec, ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet
and ValidateControllerRevision in k8s.io/kubernetes/pkg/apis/apps/validation:
- a DaemonSet needs a non-empty selector that matches the template's labels, a valid pod
  template whose restartPolicy is Always and that sets no activeDeadlineSeconds;
- updateStrategy is OnDelete or RollingUpdate; RollingUpdate needs its rollingUpdate block,
  whose maxUnavailable and maxSurge are non-negative numbers or percentages up to 100%, and
  exactly one of which is non-zero;
- minReadySeconds and revisionHistoryLimit are non-negative; the selector is immutable;
- a ControllerRevision carries data and a non-negative revision; its data is immutable.
Runs after defaulting. Pure functions returning every error at once.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.registry.pod_validation import validate_pod_spec
from apiserver.validation.field import forbidden, go_label_selector, invalid, not_supported, required
from kube.errors import FieldError

__all__ = ["validate_controller_revision", "validate_controller_revision_update", "validate_daemonset_spec",
           "validate_daemonset_update"]

Obj = dict[str, Any]

_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")


def _int_or_percent(errs: list[FieldError], path: str, value: Any) -> int:
    """The value's number (0 after recording why it is not a valid one)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            errs.append(invalid(path, value, "must be greater than or equal to 0"))
            return 0
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        number = int(value[:-1])
        if number > 100:
            errs.append(invalid(path, value, "must not be greater than 100%"))
        return number
    if isinstance(value, str):
        errs.append(invalid(path, value, _PERCENT_MSG))
    else:
        errs.append(invalid(path, value, "must be an integer or percentage (e.g '5%')"))
    return 0


def _rolling_update(errs: list[FieldError], path: str, rolling: Obj) -> None:
    unavailable_value, surge_value = rolling.get("maxUnavailable", 0), rolling.get("maxSurge", 0)
    unavailable = _int_or_percent(errs, f"{path}.maxUnavailable", unavailable_value)
    surge = _int_or_percent(errs, f"{path}.maxSurge", surge_value)
    if unavailable and surge:
        errs.append(invalid(f"{path}.maxSurge", surge_value, "may not be set when maxUnavailable is non-zero"))
    elif not unavailable and not surge:
        errs.append(invalid(f"{path}.maxUnavailable", unavailable_value, "cannot be 0 when maxSurge is 0"))


def _update_strategy(errs: list[FieldError], strategy: Any) -> None:
    path = "spec.updateStrategy"
    if not isinstance(strategy, dict):
        return
    kind = strategy.get("type")
    if kind not in ("OnDelete", "RollingUpdate"):
        errs.append(not_supported(f"{path}.type", kind, ("OnDelete", "RollingUpdate")))
    elif kind == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            errs.append(required(f"{path}.rollingUpdate"))
        else:
            _rolling_update(errs, f"{path}.rollingUpdate", rolling)


def _selector_and_labels(errs: list[FieldError], spec: Obj, template: Obj) -> None:
    from kube.selectors import selector_from_label_selector

    selector = spec.get("selector")
    if not isinstance(selector, dict) or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(invalid("spec.selector", go_label_selector(selector) if selector else None,
                            "empty selector is invalid for daemonset"))
        return
    try:
        matches = selector_from_label_selector(selector).matches
    except (ValueError, KeyError, TypeError) as e:
        errs.append(FieldError("spec.selector", f"Invalid value: {e}"))
        return
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))


def validate_daemonset_spec(spec: Obj) -> list[FieldError]:
    """Every error in a DaemonSet's spec (metadata is checked by the strategy)."""
    errs: list[FieldError] = []
    raw_template = spec.get("template")
    template: Obj = raw_template if isinstance(raw_template, dict) else {}
    _selector_and_labels(errs, spec, template)
    tspec = template.get("spec")
    if not isinstance(tspec, dict):
        errs.append(required("spec.template.spec"))
    else:
        errs += validate_pod_spec(tspec, "spec.template.spec")
        policy = tspec.get("restartPolicy")
        if policy != "Always":
            errs.append(not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
        if tspec.get("activeDeadlineSeconds") is not None:
            errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                  "activeDeadlineSeconds in DaemonSet is not Supported"))
    for field in ("minReadySeconds", "revisionHistoryLimit"):
        value = spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(invalid(f"spec.{field}", value, "must be greater than or equal to 0"))
    _update_strategy(errs, spec.get("updateStrategy"))
    return errs


def validate_daemonset_update(new: Obj, old: Obj) -> list[FieldError]:
    """What an update may not change: the selector."""
    old_sel, new_sel = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
    if old_sel is not None and new_sel != old_sel:
        return [FieldError("spec.selector", f"Invalid value: {go_label_selector(new_sel)}: field is immutable")]
    return []


def validate_controller_revision(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    if obj.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    revision = obj.get("revision")
    if isinstance(revision, int) and not isinstance(revision, bool) and revision < 0:
        errs.append(invalid("revision", revision, "must be greater than or equal to 0"))
    return errs


def validate_controller_revision_update(new: Obj, old: Obj) -> list[FieldError]:
    if new.get("data") != old.get("data"):
        return [invalid("data", new.get("data"), "field is immutable")]
    return []
