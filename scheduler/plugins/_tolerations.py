"""Whether a pod tolerates a taint, as core/v1 `Toleration.ToleratesTaint` decides it."""

from __future__ import annotations

from kube.api import Pod, Toleration

__all__ = ["tolerates"]


def _matches(t: Toleration, *, key: str, value: str, effect: str) -> bool:
    if t.effect and t.effect != effect:
        return False
    if t.key and t.key != key:
        return False
    if t.operator == "Exists":
        return True
    if t.operator in (None, "", "Equal"):
        return (t.value or "") == value
    return False


def tolerates(pod: Pod, *, key: str, effect: str, value: str = "") -> bool:
    """True when one of the pod's tolerations matches the taint `key=value:effect`."""
    return any(_matches(t, key=key, value=value, effect=effect) for t in pod.spec.tolerations or [])
