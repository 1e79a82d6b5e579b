"""`python -m controllers`: the controller-manager entrypoint (flags -> config -> run)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
import uuid

from controllers.config import USER_AGENT, ControllerManagerConfig
from controllers.manager import run_controller_manager
from kube.client import KubeconfigError, RESTClient, load_kubeconfig
from kube.leaderelection import LeaderElector, LeadershipLost
from kube.log import setup_logging

logger = logging.getLogger("controllers")


def parse_args(argv: list[str] | None = None) -> ControllerManagerConfig:
    parser = argparse.ArgumentParser(prog="python -m controllers", description="picokube controller-manager")
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig with the controller-manager's identity")
    parser.add_argument("--concurrent-deployment-syncs", type=int, default=5,
                        help="Deployments reconciled at once (default 5)")
    parser.add_argument("--concurrent-replicaset-syncs", type=int, default=5,
                        help="ReplicaSets reconciled at once (default 5)")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    parser.add_argument("--node-monitor-grace-period", type=float, default=40.0,
                        help="seconds a node may go without renewing its Lease before it is Unknown (default 40)")
    parser.add_argument("--node-monitor-period", type=float, default=5.0,
                        help="seconds between checks of every node's health (default 5)")
    parser.add_argument("--leader-elect", action="store_true",
                        help="run the controllers only while holding the kube-system/kube-controller-manager Lease")
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0)
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0)
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0)
    args = parser.parse_args(argv)
    if args.concurrent_deployment_syncs < 1 or args.concurrent_replicaset_syncs < 1:
        parser.error("--concurrent-*-syncs must be at least 1")
    return ControllerManagerConfig(kubeconfig=args.kubeconfig,
                                   concurrent_deployment_syncs=args.concurrent_deployment_syncs,
                                   concurrent_replicaset_syncs=args.concurrent_replicaset_syncs,
                                   log_level=args.log_level,
                                   node_monitor_grace_period=args.node_monitor_grace_period,
                                   node_monitor_period=args.node_monitor_period,
                                   leader_elect=args.leader_elect,
                                   leader_elect_lease_duration=args.leader_elect_lease_duration,
                                   leader_elect_renew_deadline=args.leader_elect_renew_deadline,
                                   leader_elect_retry_period=args.leader_elect_retry_period)


async def _run_until_signalled(config: ControllerManagerConfig) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        if not config.leader_elect:
            await run_controller_manager(config)
            return
        async with RESTClient(load_kubeconfig(config.kubeconfig), user_agent=USER_AGENT,
                              field_manager="leader-election") as client:
            elector = LeaderElector(client, namespace="kube-system", name="kube-controller-manager",
                                    identity=f"{socket.gethostname()}_{uuid.uuid4()}",
                                    lease_duration=config.leader_elect_lease_duration,
                                    renew_deadline=config.leader_elect_renew_deadline,
                                    retry_period=config.leader_elect_retry_period)
            await elector.run(lambda: run_controller_manager(config))
    except asyncio.CancelledError:
        logger.info("Stopping controller-manager")


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    setup_logging(config.log_level, component="controller-manager")
    try:
        asyncio.run(_run_until_signalled(config))
    except KubeconfigError as e:
        logger.error("Cannot load kubeconfig", extra={"error": str(e)})
        return 1
    except LeadershipLost as e:
        logger.error("Leadership lost, exiting", extra={"error": str(e)})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
