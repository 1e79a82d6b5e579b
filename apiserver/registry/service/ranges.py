"""The ranges Services draw from: cluster IPs out of a CIDR, node ports out of a port range.

Mirrors pkg/registry/core/service/ipallocator and portallocator: a range maps its members to
offsets 0..size-1 (a CIDR's network address and, for IPv4, its broadcast address are not
members, so the first usable address, 10.96.0.1 in 10.96.0.0/12, is offset 0). Dynamic
allocation prefers the upper part of a range and leaves the lower band (at least 16, at most
256 IPs or 128 ports) to addresses users ask for by value, as upstream does since 1.25
(ServiceIPStaticSubrange, ServiceNodePortStaticSubrange). The error messages are upstream's.
Pure values, safe to share.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["IPRange", "PortRange", "parse_port_range"]


def _lower_band(size: int, divisor: int, cap: int) -> int:
    return min(max(16, size // divisor), cap, size)


@dataclass(frozen=True)
class IPRange:
    """The members of a service CIDR (`10.96.0.0/12`)."""

    cidr: str

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return ipaddress.ip_network(self.cidr, strict=False)

    @property
    def family(self) -> str:
        return "IPv6" if self.network.version == 6 else "IPv4"

    @property
    def size(self) -> int:
        total = self.network.num_addresses
        reserved = 2 if self.network.version == 4 else 1
        # The bitmap of a range is one etcd value: IPv6 ranges are capped at 2^16 members, as
        # upstream caps them, and IPv4 ones at 2^20 (a /12, 128 KiB of bitmap).
        return max(0, min(total - reserved, 1 << 16 if self.network.version == 6 else 1 << 20))

    @property
    def lower_band(self) -> int:
        return _lower_band(self.size, 16, 256)

    def offset(self, ip: str) -> int | None:
        """The offset of `ip`, or None when it is not a member of the range."""
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return None
        if addr.version != self.network.version:
            return None
        offset = int(addr) - int(self.network.network_address) - 1
        return offset if 0 <= offset < self.size else None

    def ip(self, offset: int) -> str:
        return str(ipaddress.ip_address(int(self.network.network_address) + 1 + offset))

    def not_in_range(self, ip: str) -> str:
        return f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {self.cidr}"


@dataclass(frozen=True)
class PortRange:
    """The node ports (`30000-32767`)."""

    base: int
    count: int

    @property
    def text(self) -> str:
        return f"{self.base}-{self.base + self.count - 1}"

    @property
    def size(self) -> int:
        return self.count

    @property
    def lower_band(self) -> int:
        return _lower_band(self.count, 32, 128)

    def offset(self, port: int) -> int | None:
        offset = port - self.base
        return offset if 0 <= offset < self.count else None

    def port(self, offset: int) -> int:
        return self.base + offset

    def not_in_range(self) -> str:
        return f"provided port is not in the valid range. The range of valid ports is {self.text}"


def parse_port_range(text: str) -> PortRange:
    """`30000-32767` (or one port) -> PortRange; ValueError for anything else."""
    low, sep, high = text.strip().partition("-")
    first = int(low)
    last = int(high) if sep else first
    if not 0 < first <= last <= 65535:
        raise ValueError(f"invalid port range {text!r}")
    return PortRange(first, last - first + 1)
