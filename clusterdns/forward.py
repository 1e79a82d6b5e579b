"""Forwarding of names outside the cluster to the host's resolvers.

Mirrors CoreDNS's `forward . /etc/resolv.conf`: the upstream servers are the `nameserver`
lines of the resolv.conf file (re-read when the file changes, so a DHCP lease renewal or an
edit is picked up without a restart); a query is sent over UDP to each server in order
until one answers, and a truncated (TC) UDP answer is asked again over TCP, so large
answers arrive whole. A server that times out or refuses is skipped; when none answers the
caller gets `ForwardError` (the client then gets SERVFAIL). The client's query goes out as
it came (id, flags and EDNS), so the answer goes back as the upstream gave it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import dns.asyncquery
import dns.exception
import dns.flags
import dns.message

__all__ = ["ForwardError", "Forwarder", "read_nameservers"]

logger = logging.getLogger(__name__)

DNS_PORT = 53


class ForwardError(Exception):
    """No upstream resolver answered."""


def read_nameservers(text: str) -> list[str]:
    """The `nameserver` addresses of a resolv.conf, in order; malformed lines are skipped."""
    servers = []
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";", 1)[0].split()
        if len(fields) >= 2 and fields[0] == "nameserver":
            address = fields[1].split("%", 1)[0]  # an IPv6 zone index
            try:
                servers.append(str(ipaddress.ip_address(address)))
            except ValueError:
                continue
    return servers


class Forwarder:
    """Sends queries to the resolvers of `resolv_conf` (or to `servers`, when given)."""

    def __init__(self, *, resolv_conf: Path | None = None, servers: Sequence[str] = (), timeout: float = 2.0,
                 port: int = DNS_PORT) -> None:
        self.resolv_conf, self.timeout, self.port = resolv_conf, timeout, port
        self._servers = list(servers)
        self._stamp: tuple[int, int] | None = None

    def servers(self) -> list[str]:
        """The upstream addresses now; the file is read again only when its mtime or size changed."""
        if self.resolv_conf is None:
            return self._servers
        try:
            st = os.stat(self.resolv_conf)
        except OSError:
            return self._servers
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            try:
                self._servers = read_nameservers(self.resolv_conf.read_text(errors="replace"))
            except OSError:
                return self._servers
            self._stamp = stamp
            logger.info("Upstream resolvers", extra={"resolvConf": str(self.resolv_conf),
                                                     "servers": ",".join(self._servers) or "none"})
        return self._servers

    async def resolve(self, query: dns.message.Message) -> dns.message.Message:
        """The first upstream answer to `query`; ForwardError when no server answers."""
        problems = []
        for server in self.servers():
            try:
                return await self._ask(query, server)
            except (dns.exception.DNSException, OSError, EOFError) as e:
                problems.append(f"{server}: {type(e).__name__} {e}".strip())
        raise ForwardError("; ".join(problems) or "no upstream resolver configured")

    async def _ask(self, query: dns.message.Message, server: str) -> dns.message.Message:
        response = await dns.asyncquery.udp(query, server, timeout=self.timeout, port=self.port,
                                            ignore_unexpected=True)
        if response.flags & dns.flags.TC:
            response = await dns.asyncquery.tcp(query, server, timeout=self.timeout, port=self.port)
        return response
