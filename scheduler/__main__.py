"""`python -m scheduler --kubeconfig FILE`: run the scheduler until SIGTERM/SIGINT.

Builds the frozen `SchedulerConfig` from flags and an optional KubeSchedulerConfiguration
file (falling back to `$KUBECONFIG` and `~/.kube/config` for the kubeconfig, as kubectl
does) and runs one `Scheduler` on one event loop; `kube.component` does the rest (logging,
signals, `--leader-elect` on the kube-system/kube-scheduler Lease). Exit status 0 on a
signal, 1 on a failure (an unusable kubeconfig, a lost Lease), 2 on bad flags or a bad
`--config` file.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TypeVar

from kube.client import RESTClient, load_kubeconfig
from kube.component import (
    UsageError,
    add_leader_election_flags,
    add_tracing_flags,
    leader_election_from_flags,
    parse_flags,
    run_component,
    run_leader_elected,
    tracing_from_flags,
)
from kube.tracing import setup_tracing
from scheduler.config import (
    DEFAULT_SCHEDULER_NAME,
    FIELD_MANAGER,
    LEASE,
    USER_AGENT,
    SchedulerConfig,
)
from scheduler.profile_config import ConfigError, load_config
from scheduler.scheduler import Scheduler

PROG = "python -m scheduler"
T = TypeVar("T")


def parse_args(argv: list[str] | None = None) -> SchedulerConfig:
    """The config the flags (and `--config`) ask for; UsageError when the file cannot be used."""
    p = argparse.ArgumentParser(prog=PROG, description="picokube scheduler")
    p.add_argument("--kubeconfig", help="kubeconfig with the scheduler's identity")
    p.add_argument("--config", help="a KubeSchedulerConfiguration file (profiles, plugins, weights); its "
                                    "settings win over the flags")
    p.add_argument("--scheduler-name", default=DEFAULT_SCHEDULER_NAME,
                   help="schedule pods whose spec.schedulerName is this")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   type=str.upper)
    p.add_argument("--percentage-of-nodes-to-score", type=int, default=0,
                   help="share of nodes searched for feasible ones on large clusters (0: adaptive)")
    p.add_argument("--pod-initial-backoff-seconds", type=float, default=1.0)
    p.add_argument("--pod-max-backoff-seconds", type=float, default=10.0)
    p.add_argument("--parallel-binds", type=int, default=16)
    p.add_argument("--metrics-file", help="write attempt counts and scheduling-cycle latencies (JSON) here on exit")
    add_leader_election_flags(p, lease=LEASE, what="schedule")
    add_tracing_flags(p)
    a = p.parse_args(argv)
    config = SchedulerConfig(kubeconfig=a.kubeconfig, scheduler_name=a.scheduler_name, log_level=a.log_level,
                             percentage_of_nodes_to_score=a.percentage_of_nodes_to_score,
                             pod_initial_backoff_seconds=a.pod_initial_backoff_seconds,
                             pod_max_backoff_seconds=a.pod_max_backoff_seconds, parallel_binds=a.parallel_binds,
                             leader_election=leader_election_from_flags(a, lease=LEASE), metrics_file=a.metrics_file,
                             tracing=tracing_from_flags(a))
    if a.config is None:
        return config
    try:
        f = load_config(a.config)
    except ConfigError as e:
        raise UsageError(f"--config: {e}") from None
    return dataclasses.replace(
        config, profiles=f.profiles, kubeconfig=a.kubeconfig or f.kubeconfig,
        percentage_of_nodes_to_score=_first(f.percentage_of_nodes_to_score, config.percentage_of_nodes_to_score),
        pod_initial_backoff_seconds=_first(f.pod_initial_backoff_seconds, config.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=_first(f.pod_max_backoff_seconds, config.pod_max_backoff_seconds),
        leader_election=f.leader_election if f.leader_elect is not None else config.leader_election)


def _first(value: T | None, fallback: T) -> T:
    return fallback if value is None else value


async def run(config: SchedulerConfig) -> None:
    """Schedule (with --leader-elect, only while leader) until cancelled."""
    setup_tracing("scheduler", config=config.tracing, client=load_kubeconfig(config.kubeconfig))
    async with RESTClient(load_kubeconfig(config.kubeconfig), user_agent=USER_AGENT,
                          field_manager=FIELD_MANAGER) as client:
        await run_leader_elected(client, config.leader_election, lambda: Scheduler(config, client).run())


def main(argv: list[str] | None = None) -> int:
    config = parse_flags(parse_args, argv, prog=PROG)
    return run_component(lambda: run(config), name="scheduler", log_level=config.log_level)


if __name__ == "__main__":
    sys.exit(main())
