"""Validation of the Deployment fields beyond the pod template: strategy and rollout bounds.

Mirrors ValidateDeploymentSpec / ValidateRollingUpdateDeployment in
k8s.io/kubernetes/pkg/apis/apps/validation, with its messages: a strategy type of
Recreate or RollingUpdate, no rollingUpdate block with Recreate, maxSurge and
maxUnavailable as non-negative numbers or `N%` (maxUnavailable at most 100%), never both 0,
non-negative minReadySeconds / revisionHistoryLimit, and a progress deadline longer than
minReadySeconds. Runs after defaulting, so an absent strategy is already RollingUpdate.
"""

from __future__ import annotations

import re
from typing import Any

from kube.errors import FieldError

__all__ = ["validate_deployment_spec"]

Obj = dict[str, Any]

_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    shown = f'"{value}"' if isinstance(value, str) else value
    return FieldError(path, f"Invalid value: {shown}: {detail}")


def _int_or_percent(errs: list[FieldError], path: str, value: Any) -> int | None:
    """The value as a number (a percentage keeps its number), or None after recording why not."""
    if isinstance(value, bool):
        errs.append(_invalid(path, value, "must be an integer or percentage (e.g '5%')"))
        return None
    if isinstance(value, int):
        if value < 0:
            errs.append(_invalid(path, value, "must be greater than or equal to 0"))
            return None
        return value
    if isinstance(value, str):
        if not _PERCENT.match(value):
            errs.append(_invalid(path, value, _PERCENT_MSG))
            return None
        return int(value[:-1])
    errs.append(_invalid(path, value, "must be an integer or percentage (e.g '5%')"))
    return None


def _non_negative(errs: list[FieldError], path: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        errs.append(_invalid(path, value, "must be greater than or equal to 0"))


def _rolling_update(errs: list[FieldError], path: str, rolling: Obj) -> None:
    surge = _int_or_percent(errs, f"{path}.maxSurge", rolling.get("maxSurge", 0))
    unavailable_value = rolling.get("maxUnavailable", 0)
    unavailable = _int_or_percent(errs, f"{path}.maxUnavailable", unavailable_value)
    if unavailable is not None and isinstance(unavailable_value, str) and unavailable > 100:
        errs.append(_invalid(f"{path}.maxUnavailable", unavailable_value, "must not be greater than 100%"))
    if surge == 0 and unavailable == 0:
        errs.append(_invalid(f"{path}.maxUnavailable", unavailable_value, "may not be 0 when `maxSurge` is 0"))


def validate_deployment_spec(spec: Obj) -> list[FieldError]:
    """Every error in a Deployment spec's strategy and rollout settings (not its template)."""
    errs: list[FieldError] = []
    strategy = spec.get("strategy")
    if isinstance(strategy, dict):
        kind = strategy.get("type")
        rolling = strategy.get("rollingUpdate")
        if kind not in ("Recreate", "RollingUpdate"):
            errs.append(FieldError("spec.strategy.type",
                                   f'Unsupported value: "{kind}": supported values: "Recreate", "RollingUpdate"',
                                   reason="FieldValueNotSupported"))
        elif kind == "Recreate" and rolling is not None:
            errs.append(FieldError("spec.strategy.rollingUpdate",
                                   "Forbidden: may not be specified when strategy `type` is 'Recreate'",
                                   reason="FieldValueForbidden"))
        elif isinstance(rolling, dict):
            _rolling_update(errs, "spec.strategy.rollingUpdate", rolling)
    for field in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        _non_negative(errs, f"spec.{field}", spec.get(field))
    deadline, min_ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds") or 0
    if isinstance(deadline, int) and isinstance(min_ready, int) and 0 <= deadline <= min_ready:
        errs.append(_invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return errs
