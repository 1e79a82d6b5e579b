"""`python -m controllers --kubeconfig FILE`: the controller-manager, until SIGTERM/SIGINT.

Flags become a frozen `ControllerManagerConfig`; `kube.component` does the rest (logging,
signals, `--leader-elect` on the kube-system/kube-controller-manager Lease). Exit status 0
on a signal, 1 on a failure (an unusable kubeconfig, a lost Lease), 2 on bad flags.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from controllers.config import LEASE, USER_AGENT, ControllerManagerConfig
from controllers.manager import run_controller_manager
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
from kube.duration import parse_go_duration
from kube.tracing import setup_tracing

PROG = "python -m controllers"


def _check_root_ca_file(path: str) -> None:
    """Refuse, as kube-controller-manager does, a --root-ca-file that holds no PEM certificate."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"error reading root-ca-file at {path}: {e}") from None
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise UsageError(f"error parsing root-ca-file at {path}: no certificate found")


def parse_args(argv: list[str] | None = None) -> ControllerManagerConfig:
    """The config the flags ask for; argparse exits 2 on a malformed flag, UsageError on a bad value."""
    parser = argparse.ArgumentParser(prog=PROG, description="picokube controller-manager")
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig with the controller-manager's identity")
    parser.add_argument("--concurrent-deployment-syncs", type=int, default=5,
                        help="Deployments reconciled at once (default 5)")
    parser.add_argument("--concurrent-replicaset-syncs", type=int, default=5,
                        help="ReplicaSets reconciled at once (default 5)")
    parser.add_argument("--concurrent-service-endpoint-syncs", type=int, default=5,
                        help="Services whose EndpointSlices are reconciled at once (default 5)")
    parser.add_argument("--concurrent-endpoint-syncs", type=int, default=5,
                        help="Services whose Endpoints are reconciled at once (default 5)")
    parser.add_argument("--concurrent-statefulset-syncs", type=int, default=5,
                        help="StatefulSets reconciled at once (default 5)")
    parser.add_argument("--concurrent-rc-syncs", "--concurrent_rc_syncs", dest="concurrent_rc_syncs", type=int,
                        default=5, help="ReplicationControllers reconciled at once (default 5)")
    parser.add_argument("--max-endpoints-per-slice", type=int, default=100,
                        help="the most endpoints one EndpointSlice holds, 1 to 1000 (default 100)")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    parser.add_argument("--node-monitor-grace-period", type=float, default=40.0,
                        help="seconds a node may go without renewing its Lease before it is Unknown (default 40)")
    parser.add_argument("--node-monitor-period", type=float, default=5.0,
                        help="seconds between checks of every node's health (default 5)")
    parser.add_argument("--job-backoff-base-seconds", type=float, default=10.0,
                        help="the Job controller's first delay before re-creating a failed pod (default 10)")
    parser.add_argument("--root-ca-file", default=None,
                        help="CA bundle to publish as the kube-root-ca.crt ConfigMap in every namespace "
                             "(default: the kubeconfig's CA)")
    parser.add_argument("--terminated-pod-gc-threshold", type=int, default=12500,
                        help="terminated pods kept before the oldest are deleted; 0 keeps them all (default 12500)")
    parser.add_argument("--pod-gc-period", type=float, default=20.0,
                        help="seconds between two rounds of pod garbage collection (default 20)")
    parser.add_argument("--pod-gc-orphan-quarantine", type=float, default=40.0,
                        help="seconds a node must be missing before its pods are deleted (default 40)")
    parser.add_argument("--default-storage-class", default="",
                        help="create this default StorageClass (local-path provisioner) unless it exists "
                             "(default: none)")
    parser.add_argument("--cluster-signing-cert-file", default=None,
                        help="PEM CA certificate csrsigning signs kubernetes.io requests with")
    parser.add_argument("--cluster-signing-key-file", default=None, help="the PEM key of --cluster-signing-cert-file")
    parser.add_argument("--cluster-signing-duration", default="8760h",
                        help="the longest lifetime of a certificate csrsigning issues (default 8760h)")
    add_leader_election_flags(parser, lease=LEASE, what="run the controllers")
    add_tracing_flags(parser)
    args = parser.parse_args(argv)
    if min(args.concurrent_deployment_syncs, args.concurrent_replicaset_syncs,
           args.concurrent_service_endpoint_syncs, args.concurrent_endpoint_syncs) < 1:
        raise UsageError("--concurrent-*-syncs must be at least 1")
    if min(args.concurrent_statefulset_syncs, args.concurrent_rc_syncs) < 1:
        raise UsageError("--concurrent-*-syncs must be at least 1")
    if not 1 <= args.max_endpoints_per_slice <= 1000:
        raise UsageError("--max-endpoints-per-slice must be between 1 and 1000")
    if args.terminated_pod_gc_threshold < 0 or args.pod_gc_period <= 0 or args.pod_gc_orphan_quarantine < 0:
        raise UsageError("--terminated-pod-gc-threshold and --pod-gc-orphan-quarantine must not be negative, "
                         "--pod-gc-period must be positive")
    if args.root_ca_file is not None:
        _check_root_ca_file(args.root_ca_file)
    try:
        signing_duration = parse_go_duration(args.cluster_signing_duration)
    except ValueError as e:
        raise UsageError(f"--cluster-signing-duration: {e}") from None
    if signing_duration <= 0:
        raise UsageError(f"--cluster-signing-duration: {args.cluster_signing_duration} must be positive")
    if bool(args.cluster_signing_cert_file) != bool(args.cluster_signing_key_file):
        raise UsageError("--cluster-signing-cert-file and --cluster-signing-key-file go together")
    return ControllerManagerConfig(kubeconfig=args.kubeconfig, default_storage_class=args.default_storage_class,
                                   concurrent_deployment_syncs=args.concurrent_deployment_syncs,
                                   concurrent_replicaset_syncs=args.concurrent_replicaset_syncs,
                                   concurrent_service_endpoint_syncs=args.concurrent_service_endpoint_syncs,
                                   concurrent_endpoint_syncs=args.concurrent_endpoint_syncs,
                                   concurrent_statefulset_syncs=args.concurrent_statefulset_syncs,
                                   concurrent_rc_syncs=args.concurrent_rc_syncs,
                                   max_endpoints_per_slice=args.max_endpoints_per_slice,
                                   log_level=args.log_level,
                                   node_monitor_grace_period=args.node_monitor_grace_period,
                                   node_monitor_period=args.node_monitor_period,
                                   root_ca_file=args.root_ca_file,
                                   cluster_signing_cert_file=args.cluster_signing_cert_file,
                                   cluster_signing_key_file=args.cluster_signing_key_file,
                                   cluster_signing_duration=signing_duration,
                                   terminated_pod_gc_threshold=args.terminated_pod_gc_threshold,
                                   pod_gc_period=args.pod_gc_period,
                                   pod_gc_orphan_quarantine=args.pod_gc_orphan_quarantine,
                                   job_backoff_base_seconds=args.job_backoff_base_seconds,
                                   leader_election=leader_election_from_flags(args, lease=LEASE),
                                   tracing=tracing_from_flags(args))


async def run(config: ControllerManagerConfig) -> None:
    """Run the controllers (with --leader-elect, only while leader) until cancelled."""
    setup_tracing("controller-manager", config=config.tracing, client=load_kubeconfig(config.kubeconfig))
    if config.leader_election is None:
        await run_controller_manager(config)
        return
    async with RESTClient(load_kubeconfig(config.kubeconfig), user_agent=USER_AGENT,
                          field_manager="leader-election") as client:
        await run_leader_elected(client, config.leader_election, lambda: run_controller_manager(config))


def main(argv: list[str] | None = None) -> int:
    config = parse_flags(parse_args, argv, prog=PROG)
    return run_component(lambda: run(config), name="controller-manager", log_level=config.log_level)


if __name__ == "__main__":
    sys.exit(main())
