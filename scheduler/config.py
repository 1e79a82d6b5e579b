"""The scheduler's configuration: one frozen value built by `__main__` and passed down."""

from __future__ import annotations

from dataclasses import dataclass

from kube.component import LeaderElection
from kube.tracing import TracingConfig
from scheduler.framework import Profile

__all__ = ["DEFAULT_SCHEDULER_NAME", "FIELD_MANAGER", "LEASE", "USER_AGENT", "SchedulerConfig"]

USER_AGENT = "picokube-scheduler"
FIELD_MANAGER = "scheduler"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
LEASE = "kube-scheduler"
"""The Lease in kube-system that --leader-elect candidates compete for."""


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
    tracing: TracingConfig = TracingConfig()
    leader_election: LeaderElection | None = None
    """With --leader-elect: schedule only while holding the Lease kube-system/kube-scheduler."""
    metrics_file: str | None = None
    """Where to write the SchedulerMetrics summary (JSON) when the scheduler stops."""
    profiles: tuple[Profile, ...] = ()
    """From --config; empty: one default profile named `scheduler_name`."""
