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
    node_monitor_grace_period: float = 40.0
    """Seconds without a Lease renewal before a node is Unknown and tainted unreachable."""
    node_monitor_period: float = 5.0
    """Seconds between two looks at every node."""
    leader_elect: bool = False
    """Act only while holding the Lease kube-system/kube-controller-manager."""
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
