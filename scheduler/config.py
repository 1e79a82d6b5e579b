"""The scheduler's configuration: one frozen value built by `__main__` and passed down."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.framework import Profile

__all__ = ["SchedulerConfig", "USER_AGENT", "FIELD_MANAGER", "DEFAULT_SCHEDULER_NAME"]

USER_AGENT = "picokube-scheduler"
FIELD_MANAGER = "scheduler"
DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(frozen=True)
class SchedulerConfig:
    kubeconfig: str | None = None
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    """Pods whose `spec.schedulerName` is this (empty counts as default-scheduler) are ours."""
    log_level: str = "INFO"
    percentage_of_nodes_to_score: int = 0
    """Share of nodes to search for feasible ones on large clusters; 0 = adaptive, as upstream."""
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    parallel_binds: int = 16
    """Bindings in flight at once; more pods keep being scheduled (and assumed) meanwhile."""
    parallel_status_updates: int = 4
    leader_election: tuple[float, float, float] | None = None
    metrics_file: str | None = None
    """Where to write the SchedulerMetrics summary (JSON) when the scheduler stops."""
    profiles: tuple[Profile, ...] = ()
    """From --config; empty: one default profile named `scheduler_name`."""
    """With --leader-elect: (lease duration, renew deadline, retry period) of kube-system/kube-scheduler."""
