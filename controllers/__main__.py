"""`python -m controllers`: the controller-manager entrypoint (flags -> config -> run)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from controllers.config import ControllerManagerConfig
from controllers.manager import run_controller_manager
from kube.client import KubeconfigError
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
    args = parser.parse_args(argv)
    if args.concurrent_deployment_syncs < 1 or args.concurrent_replicaset_syncs < 1:
        parser.error("--concurrent-*-syncs must be at least 1")
    return ControllerManagerConfig(kubeconfig=args.kubeconfig,
                                   concurrent_deployment_syncs=args.concurrent_deployment_syncs,
                                   concurrent_replicaset_syncs=args.concurrent_replicaset_syncs,
                                   log_level=args.log_level,
                                   node_monitor_grace_period=args.node_monitor_grace_period,
                                   node_monitor_period=args.node_monitor_period)


async def _run_until_signalled(config: ControllerManagerConfig) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        await run_controller_manager(config)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
