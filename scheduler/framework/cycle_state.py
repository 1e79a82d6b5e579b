"""Per-cycle scratch space shared by the plugins that schedule one pod.

Mirrors kube-scheduler `framework.CycleState`: a PreFilter computes something once
(the pod's requests, say) and its Filter and Score read it for every node. A fresh
CycleState is made for every scheduling attempt and dropped after it; it is not shared
between pods or attempts, so plugins never see stale values.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CycleState"]


class CycleState:
    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under `key`; raise KeyError when no plugin wrote it this cycle."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)
