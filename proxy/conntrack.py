"""Forget UDP connection-tracking entries that would keep sending datagrams the wrong way.

A TCP connection to a removed endpoint ends by itself, but UDP "connections" are conntrack
entries that live as long as datagrams keep coming: a client that keeps querying a DNS
Service would keep reaching an endpoint that is gone, or keep being rejected after the
Service gained its first endpoint. After each sync, as kube-proxy does
(pkg/proxy/conntrack/cleanup.go), the entries of UDP service ports are deleted:
- for each endpoint a port no longer uses: the entries NATed to it (cluster IP and nodePort);
- for each port that had no endpoints and now has some: every entry to its cluster IP and nodePort.

Uses the `conntrack` tool (Debian package `conntrack`); without it, nothing is deleted and a
warning says so once. Blocking: call from a thread.
"""

from __future__ import annotations

import logging
import shutil
import subprocess

from proxy.model import ProxyModel, ServicePort

__all__ = ["stale_udp_flows", "clear_flows"]

logger = logging.getLogger(__name__)

Flow = tuple[str, ...]
"""The filter arguments of one `conntrack -D` call."""


def stale_udp_flows(old: ProxyModel, new: ProxyModel) -> list[Flow]:
    """The `conntrack -D` filters to run after moving from `old` to `new` (pure)."""
    before = {(sp.name, sp.protocol): sp for sp in old.service_ports}
    flows: list[Flow] = []
    for sp in new.service_ports:
        if sp.protocol != "UDP":
            continue
        previous = before.get((sp.name, sp.protocol))
        if sp.endpoints and (previous is None or not previous.endpoints):
            flows += _to_service(sp)
    for sp in old.service_ports:
        if sp.protocol != "UDP":
            continue
        now = next((n for n in new.service_ports if (n.name, n.protocol) == (sp.name, sp.protocol)), None)
        kept = {(e.ip, e.port) for e in now.endpoints} if now else set()
        for ep in sp.endpoints:
            if (ep.ip, ep.port) not in kept:
                flows.append(("--orig-dst", sp.cluster_ip, "-p", "udp", "--dst-nat", ep.ip))
                if sp.node_port:
                    flows.append(("-p", "udp", "--dport", str(sp.node_port), "--dst-nat", ep.ip))
    return list(dict.fromkeys(flows))


def _to_service(sp: ServicePort) -> list[Flow]:
    flows: list[Flow] = [("--orig-dst", sp.cluster_ip, "-p", "udp", "--dport", str(sp.port))]
    if sp.node_port:
        flows.append(("-p", "udp", "--dport", str(sp.node_port)))
    return flows


_warned: list[bool] = []


def clear_flows(flows: list[Flow]) -> None:
    """Delete the matching entries (none matching is fine); warn once when `conntrack` is missing."""
    if not flows:
        return
    if shutil.which("conntrack") is None:
        if not _warned:
            logger.warning("conntrack is not installed; stale UDP flows to Services are not cleared")
            _warned.append(True)
        return
    for flow in flows:
        out = subprocess.run(["conntrack", "-D", *flow], capture_output=True, text=True, check=False, timeout=30)
        if out.returncode not in (0, 1):  # 1: no entry matched
            logger.warning("Clearing conntrack entries failed", extra={"flow": " ".join(flow),
                                                                        "error": out.stderr.strip()})
