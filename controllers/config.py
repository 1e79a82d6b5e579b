"""The controller-manager's configuration, built once from flags in `__main__.py`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["USER_AGENT", "ControllerManagerConfig"]

USER_AGENT = "picokube-controller-manager"


@dataclass(frozen=True)
class ControllerManagerConfig:
    kubeconfig: str
    concurrent_deployment_syncs: int = 5
    concurrent_replicaset_syncs: int = 5
    log_level: str = "INFO"
