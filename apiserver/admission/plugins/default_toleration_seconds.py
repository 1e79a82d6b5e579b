"""DefaultTolerationSeconds: pods ride out a short node outage before being evicted.

A pod that does not tolerate `node.kubernetes.io/not-ready` and `/unreachable` (NoExecute)
gets a toleration of 300 s for each, as upstream's plugin gives, so a node that misses a few
heartbeats does not lose its pods at once.
"""

from __future__ import annotations

from apiserver.admission.interfaces import Attributes, Obj
from apiserver.admission.plugins._pods import PodCreateMutation

__all__ = ["DefaultTolerationSeconds", "DEFAULT_TOLERATION_SECONDS"]

DEFAULT_TOLERATION_SECONDS = 300
_TAINT_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


class DefaultTolerationSeconds(PodCreateMutation):
    name = "DefaultTolerationSeconds"

    def __init__(self, seconds: int = DEFAULT_TOLERATION_SECONDS) -> None:
        self.seconds = seconds

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        tolerations = spec.get("tolerations")
        if not isinstance(tolerations, list):
            tolerations = []
        for key in _TAINT_KEYS:
            if any(isinstance(t, dict) and t.get("key") == key and t.get("effect") in (None, "", "NoExecute")
                   for t in tolerations):
                continue
            if any(isinstance(t, dict) and not t.get("key") and t.get("operator") == "Exists" for t in tolerations):
                continue  # tolerates everything already
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": self.seconds})
        spec["tolerations"] = tolerations
