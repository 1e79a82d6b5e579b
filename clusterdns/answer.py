"""Answer one question from a `Zone`, or say that it belongs upstream.

Pure and synchronous: no I/O, no API call, so every cluster answer comes from memory. The
rules, as CoreDNS's kubernetes plugin applies them:

- a name in the cluster domain is answered authoritatively: the records of the asked type
  (ANY: every type), NODATA (NOERROR, no answer) when the name exists without them, and
  NXDOMAIN when it does not; negative answers carry the zone's SOA so resolvers cache
  them for the TTL; the apex answers SOA and NS queries itself;
- `<a-b-c-d>.<ns>.pod.D` answers the address it spells (CoreDNS's `pods insecure`);
- a CNAME (ExternalName) answers every type with the CNAME; a target inside the domain is
  followed here, one outside is returned as `chase`, for the caller to resolve upstream;
- SRV answers carry their targets' addresses in the additional section;
- a reverse name (`in-addr.arpa`, `ip6.arpa`) with a PTR record here is answered; every
  other name, reverse ones included, is `forward` (CoreDNS's fallthrough).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import dns.name
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.CNAME
import dns.rdtypes.IN.SRV
import dns.rrset

from clusterdns.records import Zone

__all__ = ["Answer", "answer_question"]

_REVERSE = (dns.name.from_text("in-addr.arpa."), dns.name.from_text("ip6.arpa."))
_ADDRESS_TYPES = (dns.rdatatype.A, dns.rdatatype.AAAA)
MAX_CNAME_CHAIN = 8


@dataclass
class Answer:
    """What to put in the response; `forward` means none of it: ask the upstream resolvers."""

    rcode: dns.rcode.Rcode = dns.rcode.NOERROR
    answer: list[dns.rrset.RRset] = field(default_factory=list)
    authority: list[dns.rrset.RRset] = field(default_factory=list)
    additional: list[dns.rrset.RRset] = field(default_factory=list)
    forward: bool = False
    chase: dns.name.Name | None = None
    """A CNAME target outside the cluster domain whose records should follow the answer."""


def _rrset(name: dns.name.Name, ttl: int, rdatas: list[dns.rdata.Rdata]) -> dns.rrset.RRset:
    rrset = dns.rrset.RRset(name, dns.rdataclass.IN, rdatas[0].rdtype)
    for rdata in rdatas:
        rrset.add(rdata, ttl)
    return rrset


def _soa(zone: Zone, ttl: int) -> dns.rrset.RRset:
    domain = zone.domain.to_text()
    text = f"ns.dns.{domain} hostmaster.{domain} {zone.serial} 7200 1800 86400 {ttl}"
    return _rrset(zone.domain, ttl, [dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.SOA, text)])


def _pod_address(zone: Zone, name: dns.name.Name) -> str | None:
    """`10-244-1-5.<ns>.pod.D` -> 10.244.1.5 (None when the name is not one)."""
    relative = name.relativize(zone.domain)
    labels = [label.decode().lower() for label in relative.labels]
    if len(labels) != 3 or labels[2] != "pod":
        return None
    dashed = labels[0]
    for text in (dashed.replace("-", "."), dashed.replace("-", ":")):
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            continue
    return None


def _records(zone: Zone, name: dns.name.Name, qtype: dns.rdatatype.RdataType) -> list[list[dns.rdata.Rdata]]:
    if qtype == dns.rdatatype.ANY:
        return [list(rdatas) for rdatas in zone.records.get(name, {}).values() if rdatas]
    if name == zone.domain and qtype == dns.rdatatype.NS:
        ns = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.NS, f"ns.dns.{zone.domain.to_text()}")
        return [[ns]]
    pod = _pod_address(zone, name) if qtype in _ADDRESS_TYPES else None
    if pod is not None:
        wanted = dns.rdatatype.A if ipaddress.ip_address(pod).version == 4 else dns.rdatatype.AAAA
        return [[dns.rdata.from_text(dns.rdataclass.IN, wanted, pod)]] if wanted == qtype else []
    rdatas = zone.rdatas(name, qtype)
    return [rdatas] if rdatas else []


def _additional(zone: Zone, answer: list[dns.rrset.RRset], ttl: int) -> list[dns.rrset.RRset]:
    extra: list[dns.rrset.RRset] = []
    for rrset in answer:
        if rrset.rdtype != dns.rdatatype.SRV:
            continue
        for srv in rrset:
            assert isinstance(srv, dns.rdtypes.IN.SRV.SRV)
            for rdtype in _ADDRESS_TYPES:
                rdatas = zone.rdatas(srv.target, rdtype)
                if rdatas and not any(r.name == srv.target and r.rdtype == rdtype for r in extra):
                    extra.append(_rrset(srv.target, ttl, rdatas))
    return extra


def _answer_in_zone(zone: Zone, qname: dns.name.Name, qtype: dns.rdatatype.RdataType, ttl: int) -> Answer:
    result = Answer()
    name = qname
    for _ in range(MAX_CNAME_CHAIN):
        cname = zone.rdatas(name, dns.rdatatype.CNAME)
        if not cname or qtype in (dns.rdatatype.CNAME, dns.rdatatype.ANY):
            break
        result.answer.append(_rrset(name, ttl, cname))
        target = cname[0]
        assert isinstance(target, dns.rdtypes.ANY.CNAME.CNAME)
        if not target.target.is_subdomain(zone.domain):
            result.chase = target.target
            return result
        name = target.target
    if name == zone.domain and qtype == dns.rdatatype.SOA:
        result.answer.append(_soa(zone, ttl))
        return result
    found = _records(zone, name, qtype)
    if found:
        result.answer += [_rrset(name, ttl, rdatas) for rdatas in found]
        result.additional = _additional(zone, result.answer, ttl)
        return result
    if result.answer:
        return result  # a CNAME chain within the zone that ends without the asked type
    if not (zone.exists(name) or name == zone.domain or _pod_address(zone, name) is not None):
        result.rcode = dns.rcode.NXDOMAIN
    result.authority.append(_soa(zone, ttl))
    return result


def answer_question(zone: Zone, qname: dns.name.Name, qtype: dns.rdatatype.RdataType, *, ttl: int) -> Answer:
    """The answer to (qname, qtype) from `zone`; owner names keep the question's spelling."""
    if qname.is_subdomain(zone.domain):
        return _answer_in_zone(zone, qname, qtype, ttl)
    if any(qname.is_subdomain(r) for r in _REVERSE):
        ptr = zone.rdatas(qname, dns.rdatatype.PTR)
        if ptr and qtype in (dns.rdatatype.PTR, dns.rdatatype.ANY):
            return Answer(answer=[_rrset(qname, ttl, ptr)])
    return Answer(forward=True)
