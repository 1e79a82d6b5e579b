"""The cluster's DNS records: a pure function of the Services and EndpointSlices the server watches.

Follows the Kubernetes DNS-based service discovery specification (kubernetes/dns
docs/specification.md) as CoreDNS's kubernetes plugin answers it, for cluster domain `D`:

- `<svc>.<ns>.svc.D` A/AAAA: the Service's cluster IPs; for a headless Service
  (`clusterIP: None`) each ready endpoint's address (every endpoint when the Service has
  `publishNotReadyAddresses`). Endpoints come from the slices labelled
  `kubernetes.io/service-name: <svc>` in the same namespace; an address listed twice counts once;
- `<host>.<svc>.<ns>.svc.D` A/AAAA for each endpoint of a headless Service, where `<host>`
  is the endpoint's `hostname`, else its address with dashes (`10-244-1-5`), as CoreDNS names it;
- `_<port>._<proto>.<svc>.<ns>.svc.D` SRV for each named port: priority 0, port number,
  target the Service's name (cluster IP) or each endpoint's name (headless), the port
  number coming from the Service (cluster IP) or the slices (headless, the target port);
- PTR for each cluster IP (to the Service's name) and each headless endpoint address (to
  the endpoint's name);
- an ExternalName Service is a CNAME to its `externalName`.

Everything is keyed by `dns.name.Name`, which compares and hashes case-insensitively, so
lookups ignore case as DNS requires. A `Zone` is immutable once built: the server swaps in a
new one when the caches change, and a query in flight keeps reading the one it started with.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.reversename

__all__ = ["SERVICE_NAME_LABEL", "Zone", "build_zone", "endpoint_hostname"]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
A, AAAA, CNAME, PTR, SRV = (dns.rdatatype.A, dns.rdatatype.AAAA, dns.rdatatype.CNAME, dns.rdatatype.PTR,
                            dns.rdatatype.SRV)

Obj = Mapping[str, Any]
Records = dict[dns.name.Name, dict[dns.rdatatype.RdataType, list[dns.rdata.Rdata]]]


@dataclass(frozen=True)
class Zone:
    """The records of one cluster domain, plus the reverse (PTR) records of its addresses.

    `names` holds every owner name of the domain and each of their ancestors down to the
    domain itself (empty non-terminals such as `<ns>.svc.D`), so a name that is absent is
    NXDOMAIN and one that exists without records of the asked type is NODATA.
    """

    domain: dns.name.Name
    records: Records = field(default_factory=dict)
    names: frozenset[dns.name.Name] = frozenset()
    serial: int = 1
    """The SOA serial: when the zone was built (seconds), so a new zone has a higher one."""

    def rdatas(self, name: dns.name.Name, rdtype: dns.rdatatype.RdataType) -> list[dns.rdata.Rdata]:
        return self.records.get(name, {}).get(rdtype, [])

    def exists(self, name: dns.name.Name) -> bool:
        return name in self.names or name in self.records


def _rdata(rdtype: dns.rdatatype.RdataType, text: str) -> dns.rdata.Rdata:
    return dns.rdata.from_text(dns.rdataclass.IN, rdtype, text)


def _address_type(ip: str) -> dns.rdatatype.RdataType | None:
    try:
        return A if ipaddress.ip_address(ip).version == 4 else AAAA
    except ValueError:
        return None


def endpoint_hostname(endpoint: Obj, address: str) -> str:
    """The endpoint's DNS label: its `hostname`, else its address with dashes (CoreDNS's naming)."""
    hostname = endpoint.get("hostname")
    if isinstance(hostname, str) and hostname:
        return hostname
    return address.replace(".", "-").replace(":", "-")


class _Builder:
    def __init__(self, domain: dns.name.Name) -> None:
        self.domain = domain
        self.records: Records = defaultdict(lambda: defaultdict(list))

    def add(self, name: dns.name.Name, rdtype: dns.rdatatype.RdataType, text: str) -> None:
        rdata = _rdata(rdtype, text)
        existing = self.records[name][rdtype]
        if rdata not in existing:
            existing.append(rdata)

    def add_address(self, name: dns.name.Name, ip: str) -> None:
        rdtype = _address_type(ip)
        if rdtype is None:
            return
        self.add(name, rdtype, ip)
        self.add(dns.reversename.from_address(ip), PTR, name.to_text())

    def zone(self, serial: int) -> Zone:
        names: set[dns.name.Name] = set()
        for name in self.records:
            while name.is_subdomain(self.domain) and name not in names:
                names.add(name)
                name = name.parent()
        return Zone(self.domain, {n: dict(by_type) for n, by_type in self.records.items()}, frozenset(names),
                    serial)


def _ready(endpoint: Obj, publish_not_ready: bool) -> bool:
    if publish_not_ready:
        return True
    ready = (endpoint.get("conditions") or {}).get("ready")
    return ready is None or ready is True


def _cluster_ips(spec: Obj) -> list[str]:
    ips = [ip for ip in spec.get("clusterIPs") or [] if isinstance(ip, str)]
    if not ips and isinstance(spec.get("clusterIP"), str):
        ips = [spec["clusterIP"]]
    return [ip for ip in ips if ip and ip != "None"]


def _headless_endpoints(slices: Iterable[Obj], publish_not_ready: bool) -> list[tuple[str, str]]:
    """(hostname, address) of each usable endpoint, ordered by address, each address once."""
    found: dict[str, str] = {}
    for s in slices:
        if s.get("addressType") not in ("IPv4", "IPv6"):
            continue
        for endpoint in s.get("endpoints") or []:
            if not _ready(endpoint, publish_not_ready):
                continue
            for address in endpoint.get("addresses") or []:
                found.setdefault(address, endpoint_hostname(endpoint, address))
    return sorted(((host, ip) for ip, host in found.items()), key=lambda e: e[1])


def _slice_ports(slices: Iterable[Obj]) -> list[tuple[str, str, int]]:
    """(name, protocol, port) of the slices' named ports, each once."""
    ports: set[tuple[str, str, int]] = set()
    for s in slices:
        for p in s.get("ports") or []:
            if p.get("name") and isinstance(p.get("port"), int):
                ports.add((p["name"], p.get("protocol") or "TCP", p["port"]))
    return sorted(ports)


def _srv_name(port_name: str, protocol: str, service: dns.name.Name) -> dns.name.Name:
    return dns.name.Name((f"_{port_name}".encode(), f"_{protocol.lower()}".encode(), *service.labels))


def _add_service(b: _Builder, service: Obj, slices: list[Obj]) -> None:
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    name = dns.name.Name((str(meta.get("name")).encode(), str(meta.get("namespace")).encode(), b"svc",
                          *b.domain.labels))
    if spec.get("type") == "ExternalName":
        if spec.get("externalName"):
            b.add(name, CNAME, dns.name.from_text(str(spec["externalName"])).to_text())
        return
    if spec.get("clusterIP") != "None":
        for ip in _cluster_ips(spec):
            b.add_address(name, ip)
        for p in spec.get("ports") or []:
            if p.get("name") and isinstance(p.get("port"), int):
                b.add(_srv_name(p["name"], p.get("protocol") or "TCP", name), SRV,
                      f"0 100 {p['port']} {name.to_text()}")
        return
    endpoints = _headless_endpoints(slices, bool(spec.get("publishNotReadyAddresses")))
    b.records.setdefault(name, defaultdict(list))  # a headless Service without endpoints still exists
    weight = max(1, 100 // len(endpoints)) if endpoints else 100
    for hostname, ip in endpoints:
        target = dns.name.Name((hostname.encode(), *name.labels))
        rdtype = _address_type(ip)
        if rdtype is None:
            continue
        b.add(name, rdtype, ip)
        b.add_address(target, ip)
        for port_name, protocol, port in _slice_ports(slices):
            b.add(_srv_name(port_name, protocol, name), SRV, f"0 {weight} {port} {target.to_text()}")


def build_zone(services: Iterable[Obj], slices: Iterable[Obj], *, domain: str = "cluster.local",
               serial: int = 1) -> Zone:
    """The zone of `domain` for these Services and EndpointSlices (their wire dicts)."""
    origin = dns.name.from_text(domain)
    by_service: dict[tuple[str, str], list[Obj]] = defaultdict(list)
    for s in slices:
        meta = s.get("metadata") or {}
        owner = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
        if owner:
            by_service[(str(meta.get("namespace")), owner)].append(s)
    builder = _Builder(origin)
    for service in sorted(services, key=lambda s: (s["metadata"].get("namespace", ""), s["metadata"]["name"])):
        meta = service["metadata"]
        _add_service(builder, service, by_service.get((str(meta.get("namespace")), str(meta["name"])), []))
    return builder.zone(serial)
