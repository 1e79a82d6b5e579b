"""Validation of batch/v1 Jobs, worded as pkg/apis/batch/validation words it.

`validate_job` checks a new Job: the generated selector and labels (unless manualSelector),
non-negative counts, the completion mode and its limits, the pod failure policy's rules, and
the pod template (whose restartPolicy must be OnFailure or Never). `validate_job_update`
adds upstream's immutable fields: selector, completionMode, podFailurePolicy, completions,
and the template unless the Job is suspended. Every error is returned at once.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.pod_validation import validate_pod_spec
from apiserver.validation.field import go_label_selector, invalid, not_supported, required
from kube.api.batch_v1 import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from kube.errors import FieldError

__all__ = ["validate_job", "validate_job_update", "COMPLETIONS_HARD_LIMIT"]

Obj = dict[str, Any]

COMPLETIONS_HARD_LIMIT = 100_000
"""The most completions (and parallelism) an Indexed Job may ask for (upstream completionsHardLimit)."""

_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
_OPERATORS = ("In", "NotIn")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _nonnegative(errs: list[FieldError], spec: Obj, field: str) -> None:
    value = spec.get(field)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        errs.append(invalid(f"spec.{field}", value, "must be greater than or equal to 0"))


def _has_label(errs: list[FieldError], labels: Obj, key: str, expected: str) -> None:
    path = f"spec.template.metadata.labels[{key}]"
    if key not in labels:
        errs.append(required(path, f"must be '{expected}'"))
    elif labels[key] != expected:
        errs.append(invalid(path, labels, f"must be '{expected}'"))


def _generated_selector(job: Obj) -> list[FieldError]:
    """ValidateGeneratedSelector: a generated selector's labels are on the template, with this job's uid."""
    spec, meta = _dict(job.get("spec")), _dict(job.get("metadata"))
    if spec.get("manualSelector") is True or not isinstance(spec.get("selector"), dict):
        return []
    errs: list[FieldError] = []
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    if not uid:
        errs.append(required("metadata.uid"))
    labels = _dict(_dict(_dict(spec.get("template")).get("metadata")).get("labels"))
    for key, value in ((LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, name),
                       (CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, name)):
        _has_label(errs, labels, key, value)
    match = _dict(spec["selector"].get("matchLabels"))
    if spec["selector"].get("matchExpressions") or match.get(CONTROLLER_UID_LABEL, uid) != uid or any(
            k not in (CONTROLLER_UID_LABEL, LEGACY_CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_JOB_NAME_LABEL)
            for k in match):
        errs.append(FieldError("spec.selector",
                               f"Invalid value: {go_label_selector(spec['selector'])}: `selector` not auto-generated"))
    return errs


def _completion_mode(errs: list[FieldError], spec: Obj) -> None:
    mode = spec.get("completionMode")
    if mode not in (None, "NonIndexed", "Indexed"):
        errs.append(not_supported("spec.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode != "Indexed":
        return
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if completions is None:
        errs.append(required("spec.completions", "when completion mode is Indexed"))
    elif isinstance(completions, int) and completions > COMPLETIONS_HARD_LIMIT:
        errs.append(invalid("spec.completions", completions,
                            f"must be less than or equal to {COMPLETIONS_HARD_LIMIT} when completion mode is Indexed"))
    if isinstance(parallelism, int) and parallelism > COMPLETIONS_HARD_LIMIT:
        errs.append(invalid("spec.parallelism", parallelism,
                            f"must be less than or equal to {COMPLETIONS_HARD_LIMIT} when completion mode is Indexed"))


def _pod_failure_policy(errs: list[FieldError], spec: Obj) -> None:
    policy = spec.get("podFailurePolicy")
    if policy is None:
        return
    for i, rule in enumerate(_dict(policy).get("rules") or []):
        path = f"spec.podFailurePolicy.rules[{i}]"
        rule = _dict(rule)
        action = rule.get("action")
        if action not in _ACTIONS:
            errs.append(not_supported(f"{path}.action", action, _ACTIONS))
        on_codes, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions")
        if (on_codes is None) == (not on_conditions):
            errs.append(invalid(path, rule, "specifying one of OnExitCodes and OnPodConditions is required"))
        if isinstance(on_codes, dict):
            operator, values = on_codes.get("operator"), on_codes.get("values") or []
            if operator not in _OPERATORS:
                errs.append(not_supported(f"{path}.onExitCodes.operator", operator, _OPERATORS))
            if not values:
                errs.append(required(f"{path}.onExitCodes.values", "at least one value is required"))
            if operator == "In" and 0 in values:
                errs.append(invalid(f"{path}.onExitCodes.values[{values.index(0)}]", 0,
                                    "must not be 0 for the In operator"))


def validate_job(job: Obj) -> list[FieldError]:
    """Every error in a Job's spec (metadata is checked by the caller)."""
    spec = _dict(job.get("spec"))
    errs = _generated_selector(job)
    for field in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        _nonnegative(errs, spec, field)
    _completion_mode(errs, spec)
    _pod_failure_policy(errs, spec)
    template = _dict(spec.get("template"))
    tspec = template.get("spec")
    if not isinstance(tspec, dict):
        errs.append(required("spec.template.spec"))
    else:
        errs += validate_pod_spec(tspec, "spec.template.spec")
        if tspec.get("restartPolicy") not in ("OnFailure", "Never"):
            errs.append(not_supported("spec.template.spec.restartPolicy", tspec.get("restartPolicy"),
                                      ("OnFailure", "Never")))
    errs += _selector_matches(spec, template)
    return errs


def _selector_matches(spec: Obj, template: Obj) -> list[FieldError]:
    from kube.selectors import selector_from_label_selector

    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    labels = _dict(_dict(template.get("metadata")).get("labels"))
    try:
        matches = selector_from_label_selector(selector).matches(labels)
    except (ValueError, KeyError, TypeError) as e:
        return [FieldError("spec.selector", f"Invalid value: {e}")]
    return [] if matches else [invalid("spec.template.metadata.labels", labels,
                                       "`selector` does not match template `labels`")]


def validate_job_update(new: Obj, old: Obj) -> list[FieldError]:
    """Every error in an updated Job, including changes to fields upstream keeps immutable."""
    errs = validate_job(new)
    spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    for field in ("selector", "completionMode", "podFailurePolicy", "completions"):
        if spec.get(field) != old_spec.get(field):
            errs.append(_immutable(f"spec.{field}", spec.get(field)))
    if spec.get("template") != old_spec.get("template") and old_spec.get("suspend") is not True:
        errs.append(_immutable("spec.template", spec.get("template")))
    return errs


def _immutable(path: str, value: Any) -> FieldError:
    shown = go_label_selector(value) if path == "spec.selector" else None
    if shown is not None:
        return FieldError(path, f"Invalid value: {shown}: field is immutable")
    return invalid(path, value, "field is immutable")
