"""Validation of a PodDisruptionBudget: its spec on every write, its status through /status.

Mirrors ValidatePodDisruptionBudgetSpec and ValidatePodDisruptionBudgetStatusUpdate in
k8s.io/kubernetes/pkg/apis/policy/validation, with their messages:
- `minAvailable` and `maxUnavailable` are never both set;
- each is a non-negative integer or a percentage `N%` of at most 100%, printed as upstream
  prints an IntOrString;
- the selector must parse (a missing selector is allowed: it selects no pods);
- `unhealthyPodEvictionPolicy`, when set, is IfHealthyBudget or AlwaysAllow;
- the status counters are never negative.
The spec may change after creation (policy/v1 made it mutable).
"""

from __future__ import annotations

import re
from typing import Any

from apiserver.validation.field import go_quote, go_value, invalid, not_supported
from kube.errors import FieldError

__all__ = ["validate_pdb_spec", "validate_pdb_status"]

Obj = dict[str, Any]

_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")
_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")


def _int_or_string(value: Any) -> str:
    """Go's %#v of an intstr.IntOrString, as upstream prints a bad minAvailable."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}"
    return f"intstr.IntOrString{{Type:0, IntVal:{go_value(value)}, StrVal:\"\"}}"


def _int_or_percent(path: str, value: Any) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [FieldError(path, f"Invalid value: {_int_or_string(value)}: must be an integer or percentage "
                                 "(e.g '5%')")]
    if isinstance(value, int):
        return [invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    if not _PERCENT.match(value):
        return [FieldError(path, f"Invalid value: {_int_or_string(value)}: {_PERCENT_MSG}")]
    if int(value[:-1]) > 100:
        return [FieldError(path, f"Invalid value: {_int_or_string(value)}: must not be greater than 100%")]
    return []


def _selector(path: str, selector: Any) -> list[FieldError]:
    from kube.selectors import selector_from_label_selector

    if selector is None:
        return []
    try:
        selector_from_label_selector(selector)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        return [FieldError(path, f"Invalid value: {e}")]
    return []


def validate_pdb_spec(spec: Obj) -> list[FieldError]:
    """Every error in a PodDisruptionBudget's spec."""
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
    for field in ("minAvailable", "maxUnavailable"):
        if spec.get(field) is not None:
            errs += _int_or_percent(f"spec.{field}", spec[field])
    errs += _selector("spec.selector", spec.get("selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, _EVICTION_POLICIES))
    return errs


def validate_pdb_status(status: Obj) -> list[FieldError]:
    """Every error in a PodDisruptionBudget's status: the counters are never negative."""
    errs: list[FieldError] = []
    for field in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        value = status.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(invalid(f"status.{field}", value, "must be greater than or equal to 0"))
    return errs
