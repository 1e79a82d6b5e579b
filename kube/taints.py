"""Whether a pod's tolerations tolerate a node's taint, and for how long (NoExecute).

Mirrors k8s.io/api core/v1 `Toleration.ToleratesTaint`, the scheduler's
`TolerationsTolerateTaint`, and the taint eviction manager's `getMinTolerationTime`:
- a toleration with an effect matches only taints of that effect (no effect: every effect);
- a toleration with a key matches only taints of that key (no key: every key, which only
  `operator: Exists` may ask for);
- `operator: Exists` matches any value; `operator: Equal` (or no operator) matches only
  the taint's exact value, where an unset value counts as "";
- any other operator matches nothing.
For a NoExecute taint, `toleration_seconds` says how long a pod may stay: None when no
toleration matches (evict now), infinity when a matching toleration sets no limit and none
sets one, otherwise the smallest limit any matching toleration sets (negative counts as 0).
All functions are pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kube.api.core_v1 import Taint, Toleration

__all__ = [
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "toleration_seconds",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def toleration_tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """True when this one toleration matches the taint (key, effect, operator and value)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in (None, "", "Equal"):
        return (toleration.value or "") == (taint.value or "")
    return False


def tolerations_tolerate_taint(tolerations: Iterable[Toleration] | None, taint: Taint) -> bool:
    """True when any of the tolerations (None: no tolerations) matches the taint."""
    return any(toleration_tolerates_taint(t, taint) for t in tolerations or ())


def toleration_seconds(tolerations: Iterable[Toleration] | None, taint: Taint) -> float | None:
    """How long a pod with these tolerations may stay on a node with this NoExecute taint.

    None: not tolerated at all. `math.inf`: tolerated forever. Otherwise the smallest
    `tolerationSeconds` among the matching tolerations, never below 0.
    """
    matching = [t for t in tolerations or () if toleration_tolerates_taint(t, taint)]
    if not matching:
        return None
    limits = [max(0.0, float(t.toleration_seconds)) for t in matching if t.toleration_seconds is not None]
    return min(limits) if limits else math.inf
