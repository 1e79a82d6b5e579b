"""`python -m scheduler --kubeconfig FILE`: run the scheduler until SIGTERM/SIGINT.

Builds the frozen `SchedulerConfig` from flags (falling back to `$KUBECONFIG` and
`~/.kube/config` for the kubeconfig, as kubectl does), sets up logging, and runs one
`Scheduler` on one event loop. Exit status 0 on a signal, 1 on a configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import signal
import socket
import sys
import uuid
from typing import TypeVar

from kube.client import KubeconfigError, RESTClient, load_kubeconfig
from kube.leaderelection import LeaderElector, LeadershipLost
from kube.log import setup_logging
from scheduler.config import DEFAULT_SCHEDULER_NAME, FIELD_MANAGER, USER_AGENT, SchedulerConfig
from scheduler.profile_config import ConfigError, load_config
from scheduler.scheduler import Scheduler

T = TypeVar("T")

logger = logging.getLogger("scheduler")


def parse_args(argv: list[str] | None = None) -> SchedulerConfig:
    p = argparse.ArgumentParser(prog="python -m scheduler", description="picokube scheduler")
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
    p.add_argument("--leader-elect", action="store_true",
                   help="schedule only while holding the kube-system/kube-scheduler Lease")
    p.add_argument("--leader-elect-lease-duration", type=float, default=15.0)
    p.add_argument("--leader-elect-renew-deadline", type=float, default=10.0)
    p.add_argument("--leader-elect-retry-period", type=float, default=2.0)
    a = p.parse_args(argv)
    election = None if not a.leader_elect else \
        (a.leader_elect_lease_duration, a.leader_elect_renew_deadline, a.leader_elect_retry_period)
    config = SchedulerConfig(kubeconfig=a.kubeconfig, scheduler_name=a.scheduler_name, log_level=a.log_level,
                             percentage_of_nodes_to_score=a.percentage_of_nodes_to_score,
                             pod_initial_backoff_seconds=a.pod_initial_backoff_seconds,
                             pod_max_backoff_seconds=a.pod_max_backoff_seconds, parallel_binds=a.parallel_binds,
                             leader_election=election, metrics_file=a.metrics_file)
    if a.config is None:
        return config
    f = load_config(a.config)
    return dataclasses.replace(
        config, profiles=f.profiles, kubeconfig=a.kubeconfig or f.kubeconfig,
        percentage_of_nodes_to_score=_first(f.percentage_of_nodes_to_score, config.percentage_of_nodes_to_score),
        pod_initial_backoff_seconds=_first(f.pod_initial_backoff_seconds, config.pod_initial_backoff_seconds),
        pod_max_backoff_seconds=_first(f.pod_max_backoff_seconds, config.pod_max_backoff_seconds),
        leader_election=f.leader_election or config.leader_election)


def _first(value: T | None, fallback: T) -> T:
    return fallback if value is None else value


async def run(config: SchedulerConfig) -> None:
    """Run until cancelled or signalled."""
    client_config = load_kubeconfig(config.kubeconfig)
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    async with RESTClient(client_config, user_agent=USER_AGENT, field_manager=FIELD_MANAGER) as client:
        try:
            if config.leader_election is None:
                await Scheduler(config, client).run()
                return
            duration, deadline, retry = config.leader_election
            elector = LeaderElector(client, namespace="kube-system", name="kube-scheduler",
                                    identity=f"{socket.gethostname()}_{uuid.uuid4()}", lease_duration=duration,
                                    renew_deadline=deadline, retry_period=retry)
            await elector.run(lambda: Scheduler(config, client).run())
        except asyncio.CancelledError:
            logger.info("Shutting down")


def main(argv: list[str] | None = None) -> int:
    try:
        config = parse_args(argv)
    except ConfigError as e:
        print(f"scheduler: {e}", file=sys.stderr)
        return 1
    setup_logging(config.log_level, component="scheduler")
    try:
        asyncio.run(run(config))
    except KubeconfigError as e:
        logger.error("Cannot load kubeconfig", extra={"error": str(e)})
        return 1
    except LeadershipLost as e:
        logger.error("Leadership lost, exiting", extra={"error": str(e)})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
