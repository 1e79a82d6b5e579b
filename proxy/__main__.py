"""`python -m proxy --kubeconfig FILE --hostname-override NODE`: one node's proxy until SIGTERM.

Flags follow kube-proxy's. `--proxy-mode iptables` (the default, as upstream) programs the
node's iptables and needs root and the iptables tools; `--proxy-mode simulated` (alias
`--mode`) computes and reports the same rules without touching the node, for nodes with a
simulated runtime. On SIGTERM or SIGINT the proxy removes the rules it programmed before it
exits; `--cleanup` only removes every rule a proxy left on this node (after a SIGKILL, say)
and exits, as `kube-proxy --cleanup` does. `kube.component` does the rest (logging,
signals). Exit status 0 on a signal, 1 on a failure (an unusable kubeconfig, no iptables,
a port in use), 2 on bad flags.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import socket
import sys
from pathlib import Path

from kube.client import RESTClient, load_kubeconfig
from kube.component import UsageError, add_tracing_flags, parse_flags, run_component, tracing_from_flags
from kube.tracing import setup_tracing
from proxy.backend import Backend, IptablesBackend, SimulatedBackend
from proxy.config import FIELD_MANAGER, USER_AGENT, ProxyConfig
from proxy.iptables.runner import IptablesError, IptablesRunner, iptables_available
from proxy.metrics import ProxyMetrics
from proxy.proxier import Proxier
from proxy.server import ProxyServer

PROG = "python -m proxy"


class ConfigError(UsageError):
    """A flag's value cannot be used."""


def _cidr(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return str(ipaddress.IPv4Network(text, strict=False))
    except ValueError:
        raise ConfigError(f"--cluster-cidr: {text!r} is not an IPv4 CIDR") from None


def _bind_address(text: str) -> str:
    if not text:
        return ""
    _, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"--healthz-bind-address: {text!r} is not HOST:PORT")
    return text


def parse_args(argv: list[str] | None = None) -> ProxyConfig:
    p = argparse.ArgumentParser(prog=PROG, description="picokube proxy (kube-proxy)")
    p.add_argument("--kubeconfig", help="kubeconfig with the proxy's identity (system:kube-proxy)")
    p.add_argument("--hostname-override", default=None, help="this node's name (default: the hostname)")
    p.add_argument("--proxy-mode", "--mode", dest="mode", choices=["iptables", "simulated"], default="iptables",
                   help="iptables: program the node; simulated: only compute and report the rules")
    p.add_argument("--cluster-cidr", default=None,
                   help="the pods' address range; traffic from outside it to a cluster IP is masqueraded")
    p.add_argument("--iptables-masquerade-bit", type=int, default=14, help="the fwmark bit that asks for SNAT")
    p.add_argument("--iptables-sync-period", type=float, default=30.0, help="seconds between full rewrites")
    p.add_argument("--iptables-min-sync-period", type=float, default=1.0,
                   help="seconds at least between two rewrites (a burst of changes is coalesced)")
    p.add_argument("--healthz-bind-address", default="0.0.0.0:10256",
                   help="HOST:PORT of /healthz, /metrics and /status (port 0: any free port; empty: none)")
    p.add_argument("--status-file", type=Path, default=None, help="write the /status report here after each sync")
    p.add_argument("--cleanup", action="store_true", help="remove every rule a proxy left on this node, then exit")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper)
    add_tracing_flags(p)
    a = p.parse_args(argv)
    if not 0 <= a.iptables_masquerade_bit <= 31:
        raise ConfigError("--iptables-masquerade-bit must be between 0 and 31")
    if a.iptables_min_sync_period < 0 or a.iptables_sync_period <= 0:
        raise ConfigError("--iptables-sync-period must be more than 0 and --iptables-min-sync-period 0 or more")
    if not a.cleanup and not a.kubeconfig:
        raise ConfigError("--kubeconfig is required")
    return ProxyConfig(node_name=a.hostname_override or socket.gethostname().lower(), kubeconfig=a.kubeconfig,
                       mode=a.mode, cluster_cidr=_cidr(a.cluster_cidr), masquerade_bit=a.iptables_masquerade_bit,
                       sync_period=a.iptables_sync_period, min_sync_period=a.iptables_min_sync_period,
                       healthz_bind_address=_bind_address(a.healthz_bind_address), status_file=a.status_file,
                       cleanup=a.cleanup, log_level=a.log_level, tracing=tracing_from_flags(a))


def build_backend(config: ProxyConfig) -> Backend:
    """The backend for `config.mode`; IptablesError when iptables cannot be programmed here."""
    if config.mode == "simulated":
        return SimulatedBackend(cluster_cidr=config.cluster_cidr, masquerade_bit=config.masquerade_bit)
    problem = iptables_available()
    if problem is not None:
        raise IptablesError(problem)
    return IptablesBackend(cluster_cidr=config.cluster_cidr, masquerade_bit=config.masquerade_bit)


async def run(config: ProxyConfig) -> None:
    """Run the proxy until cancelled; its rules are removed on the way out."""
    client_config = load_kubeconfig(config.kubeconfig)
    setup_tracing("kube-proxy", config=config.tracing, client=client_config)
    backend, metrics = build_backend(config), ProxyMetrics()
    async with RESTClient(client_config, user_agent=USER_AGENT, field_manager=FIELD_MANAGER) as client:
        proxier = Proxier(config, client, backend, metrics=metrics)
        try:
            async with asyncio.TaskGroup() as tg:
                bind = config.healthz_host_port
                if bind is not None:
                    server = ProxyServer(address=bind[0], port=bind[1], mode=backend.mode, metrics=metrics,
                                         status=proxier.status)
                    server.bind()
                    tg.create_task(server.serve())
                tg.create_task(proxier.run())
        finally:
            await backend.cleanup()


async def cleanup() -> None:
    """Remove every rule and chain a proxy programs on this node (`--cleanup`)."""
    problem = iptables_available()
    if problem is not None:
        raise IptablesError(problem)
    await asyncio.to_thread(IptablesRunner().cleanup)


def main(argv: list[str] | None = None) -> int:
    config = parse_flags(parse_args, argv, prog=PROG)
    failures: dict[type[BaseException], str] = {IptablesError: "Cannot program iptables",
                                                OSError: "Cannot start the proxy's server"}
    work = cleanup if config.cleanup else (lambda: run(config))
    return run_component(work, name=f"kube-proxy-{config.node_name}", log_level=config.log_level,
                         failures=failures)


if __name__ == "__main__":
    sys.exit(main())
