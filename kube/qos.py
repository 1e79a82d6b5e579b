"""A pod's QoS class (core/v1 `qos.GetPodQOS`), shared by the API server and the kubelet.

- BestEffort: no container (init containers included) requests or limits cpu or memory;
- Guaranteed: every container limits cpu and memory, with requests (when set) equal to them;
- Burstable: everything in between.
Amounts compare by value (`1` equals `1000m`); other resources do not count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kube.quantity import cpu_millis, to_int

__all__ = ["qos_class"]

_COMPUTE = ("cpu", "memory")


def _amount(name: str, value: Any) -> int:
    return cpu_millis(str(value)) if name == "cpu" else to_int(str(value))


def qos_class(resources: Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]) -> str:
    """The class for containers given as (requests, limits) pairs."""
    any_set, guaranteed, seen = False, True, False
    for requests, limits in resources:
        seen = True
        req = {k: v for k, v in (requests or {}).items() if k in _COMPUTE}
        lim = {k: v for k, v in (limits or {}).items() if k in _COMPUTE}
        if req or lim:
            any_set = True
        for name in _COMPUTE:
            if name not in lim or (name in req and _amount(name, req[name]) != _amount(name, lim[name])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed and seen else "Burstable"
