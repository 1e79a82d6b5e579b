"""What an eviction asks of the pod's PodDisruptionBudget: find it, then spend one disruption.

Mirrors the budget half of pkg/registry/core/pod/storage/eviction.go:
- `covering_budgets` lists the budgets in the pod's namespace whose selector matches its
  labels; a budget with no selector or an empty one matches nothing here (upstream: "it
  should match nothing, not everything"), nor does one whose selector does not parse;
- `spend_disruption` answers 429 TooManyRequests (with a `DisruptionBudget` cause) while
  the controller has not yet seen the budget's latest generation, or when no disruption is
  allowed; 403 when the status is corrupt; otherwise it decrements
  `status.disruptionsAllowed`, records the pod in `status.disruptedPods` (so the controller
  stops counting it as healthy before it is gone) and writes the status conditional on the
  budget's resourceVersion, so two evictions never spend the same disruption.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.registry.generic import ListOptions, RegistryStore, now_rfc3339
from kube.errors import Forbidden, TooManyRequests
from kube.selectors import selector_from_label_selector

__all__ = ["MAX_DISRUPTED_POD_SIZE", "covering_budgets", "spend_disruption", "too_many_requests"]

Obj = dict[str, Any]

MAX_DISRUPTED_POD_SIZE = 2000
"""Evictions the controller has not yet confirmed, beyond which a budget refuses more."""

DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
_VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def too_many_requests(detail: str, *, retry_after: int = 0) -> TooManyRequests:
    """The 429 an eviction gets while the budget does not allow it, with upstream's cause."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": detail}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return TooManyRequests(_VIOLATES, details=details)


def _selects(pdb: Obj, labels: dict[str, str]) -> bool:
    raw = (pdb.get("spec") or {}).get("selector")
    if not isinstance(raw, dict):
        return False
    try:
        selector = selector_from_label_selector(raw)
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    return not selector.empty() and selector.matches(labels)


async def covering_budgets(pdbs: RegistryStore, pod: Obj) -> list[Obj]:
    """The budgets whose selector matches the pod's labels, in its namespace."""
    meta = pod.get("metadata") or {}
    listed = await pdbs.list(meta.get("namespace"), ListOptions())
    labels = meta.get("labels") or {}
    return [p for p in listed.get("items") or [] if _selects(p, labels)]


def _forbidden(name: str, why: str) -> Forbidden:
    return Forbidden(f'poddisruptionbudgets.policy "{name}" is forbidden: {why}',
                     details={"name": name, "group": "policy", "kind": "poddisruptionbudgets"})


def _disruption_allowed_condition(status: Obj, generation: int) -> None:
    """pdbhelper.UpdateDisruptionAllowedCondition once an eviction spent the last disruption."""
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    found = next((c for c in conditions if c.get("type") == "DisruptionAllowed"), None)
    if found is None:
        found = {"type": "DisruptionAllowed"}
        conditions.append(found)
    if found.get("status") != "False":
        found["lastTransitionTime"] = now_rfc3339()
    found.update(status="False", reason="InsufficientPods", message=found.get("message") or "",
                 observedGeneration=generation)
    status["conditions"] = conditions


def _spent(pdb: Obj, pod_name: str) -> Obj:
    """The budget with one disruption spent on `pod_name`; raises when none may be spent."""
    meta, status = pdb.get("metadata") or {}, copy.deepcopy(pdb.get("status") or {})
    name = str(meta.get("name"))
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise too_many_requests(f"The disruption budget {name} is still being processed by the server.",
                                retry_after=10)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise _forbidden(name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise _forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        raise too_many_requests(f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
                                f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently")
    status["disruptionsAllowed"] = allowed - 1
    if allowed == 1:
        _disruption_allowed_condition(status, int(status.get("observedGeneration") or 0))
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now_rfc3339()}
    return {**pdb, "status": status}


async def spend_disruption(pdbs: RegistryStore, pdb: Obj, pod_name: str, *, dry_run: bool) -> None:
    """Spend one of the budget's disruptions on `pod_name`; raises Conflict when the budget moved on."""
    spent = _spent(pdb, pod_name)
    if dry_run:
        return
    meta = pdb.get("metadata") or {}
    await pdbs.update(meta.get("namespace"), str(meta.get("name")), spent, subresource="status")
