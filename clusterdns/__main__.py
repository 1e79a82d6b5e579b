"""`python -m clusterdns --kubeconfig FILE`: the cluster's DNS server until SIGTERM.

It listens on `--dns-bind-address:--dns-port` over UDP and TCP, answers names in
`--cluster-domain` from the Services and EndpointSlices it watches, forwards every other
name to the `nameserver`s of `--resolv-conf`, and (unless `--no-publish`) keeps the
`kube-system/kube-dns` Service at `--service-ip` pointing at `--advertise-address` and the
port it listens on. `kube.component` does the rest (logging, signals). Exit status 0 on a
signal, 1 on a failure (an unusable kubeconfig, a port in use), 2 on bad flags.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import sys
from pathlib import Path

import dns.name

from clusterdns.config import DEFAULT_CLUSTER_DNS_IP, FIELD_MANAGER, USER_AGENT, ClusterDNSConfig
from clusterdns.forward import Forwarder
from clusterdns.publish import KubeDNSPublisher
from clusterdns.records import build_zone
from clusterdns.resolver import ClusterResolver
from clusterdns.server import DNSServer
from clusterdns.watcher import ZoneWatcher
from kube.client import RESTClient, load_kubeconfig
from kube.component import UsageError, add_tracing_flags, parse_flags, run_component, tracing_from_flags
from kube.netutil import host_address
from kube.tracing import setup_tracing

PROG = "python -m clusterdns"


class ConfigError(UsageError):
    """A flag's value cannot be used."""


def _ip(flag: str, text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise ConfigError(f"{flag}: {text!r} is not an IP address") from None


def _domain(text: str) -> str:
    try:
        name = dns.name.from_text(text.strip("."))
    except dns.exception.DNSException as e:
        raise ConfigError(f"--cluster-domain: {text!r} is not a domain name: {e}") from None
    if name == dns.name.root:
        raise ConfigError("--cluster-domain must not be empty")
    return name.to_text(omit_final_dot=True).lower()


def parse_args(argv: list[str] | None = None) -> ClusterDNSConfig:
    p = argparse.ArgumentParser(prog=PROG, description="picokube cluster DNS")
    p.add_argument("--kubeconfig", help="kubeconfig with the DNS server's identity (system:kube-dns)")
    p.add_argument("--cluster-domain", "--domain", default="cluster.local",
                   help="the domain the cluster's names live under")
    p.add_argument("--dns-bind-address", "--bind-address", dest="bind_address", default="0.0.0.0",
                   help="the address to listen on (UDP and TCP)")
    p.add_argument("--dns-port", "--port", dest="port", type=int, default=53,
                   help="the port to listen on (0: any free port)")
    p.add_argument("--advertise-address", default=None,
                   help="the address published in kube-dns's endpoints (default: the bind address, "
                        "or this host's primary address when binding every address)")
    p.add_argument("--service-ip", default=DEFAULT_CLUSTER_DNS_IP,
                   help="the kube-dns Service's cluster IP, the kubelets' --cluster-dns")
    p.add_argument("--no-publish", dest="publish", action="store_false",
                   help="do not write the kube-dns Service, Endpoints and EndpointSlice")
    p.add_argument("--resolv-conf", default="/etc/resolv.conf",
                   help="the resolver file whose nameservers answer names outside the cluster")
    p.add_argument("--upstream-timeout", type=float, default=2.0, help="seconds each upstream resolver gets")
    p.add_argument("--ttl", type=int, default=5, help="the TTL of the cluster's records, in seconds")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper)
    add_tracing_flags(p)
    a = p.parse_args(argv)
    if not a.kubeconfig:
        raise ConfigError("--kubeconfig is required")
    if not 0 <= a.port < 65536:
        raise ConfigError(f"--dns-port: {a.port} is not a port")
    if a.ttl < 0 or a.upstream_timeout <= 0:
        raise ConfigError("--ttl must be 0 or more and --upstream-timeout more than 0")
    bind = _ip("--dns-bind-address", a.bind_address)
    advertise = _ip("--advertise-address", a.advertise_address) if a.advertise_address else None
    return ClusterDNSConfig(kubeconfig=a.kubeconfig, cluster_domain=_domain(a.cluster_domain), bind_address=bind,
                            port=a.port, advertise_address=advertise, service_ip=_ip("--service-ip", a.service_ip),
                            publish=a.publish, resolv_conf=a.resolv_conf, upstream_timeout=a.upstream_timeout,
                            ttl=a.ttl, log_level=a.log_level, tracing=tracing_from_flags(a))


def advertise_address(config: ClusterDNSConfig) -> str:
    if config.advertise_address:
        return config.advertise_address
    if not ipaddress.ip_address(config.bind_address).is_unspecified:
        return config.bind_address
    return host_address()


async def run(config: ClusterDNSConfig) -> None:
    """Serve until cancelled."""
    client_config = load_kubeconfig(config.kubeconfig)
    setup_tracing("kube-dns", config=config.tracing, client=client_config)
    forwarder = Forwarder(resolv_conf=Path(config.resolv_conf), timeout=config.upstream_timeout)
    resolver = ClusterResolver(build_zone([], [], domain=config.cluster_domain), forwarder, ttl=config.ttl)
    server = DNSServer(resolver.handle, address=config.bind_address, port=config.port)
    port = server.bind()
    async with RESTClient(client_config, user_agent=USER_AGENT, field_manager=FIELD_MANAGER) as client:
        publisher = KubeDNSPublisher(client, service_ip=config.service_ip, address=advertise_address(config),
                                     port=port) if config.publish else None
        watcher = ZoneWatcher(client, resolver, domain=config.cluster_domain, publisher=publisher)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(watcher.run())
            await watcher.synced.wait()
            forwarder.servers()  # log the upstream resolvers once at start
            tg.create_task(server.serve())


def main(argv: list[str] | None = None) -> int:
    config = parse_flags(parse_args, argv, prog=PROG)
    failures: dict[type[BaseException], str] = {OSError: "Cannot listen for DNS queries"}
    return run_component(lambda: run(config), name="kube-dns", log_level=config.log_level, failures=failures)


if __name__ == "__main__":
    sys.exit(main())
