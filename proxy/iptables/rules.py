"""Render a `ProxyModel` as one `iptables-restore --noflush` input: kube-proxy's chains, in full.

Mirrors kube-proxy's iptables mode (pkg/proxy/iptables/proxier.go, syncProxyRules), with its
chain names, comments and rule shapes, so `iptables-save` reads as on any node:

    nat    PREROUTING, OUTPUT -> KUBE-SERVICES      cluster IP:port -> KUBE-SVC-<hash>,
                                                    external IP:port -> KUBE-EXT-<hash>,
                                                    last: local destination -> KUBE-NODEPORTS
           KUBE-NODEPORTS                           nodePort -> KUBE-EXT-<hash>
           KUBE-EXT-<hash>                          mark for masquerade, then KUBE-SVC-<hash>
                                                    (externalTrafficPolicy Local: KUBE-SVL-<hash>)
           KUBE-SVC-<hash>, KUBE-SVL-<hash>         one endpoint at random (statistic --probability
                                                    1/n, 1/(n-1), ...), or the remembered one
                                                    under ClientIP affinity -> KUBE-SEP-<hash>
           KUBE-SEP-<hash>                          hairpin mark, DNAT to the endpoint
           POSTROUTING -> KUBE-POSTROUTING          MASQUERADE what KUBE-MARK-MASQ marked
    filter KUBE-SERVICES, KUBE-EXTERNAL-SERVICES    REJECT ports with no endpoints (DROP: no local ones)
           KUBE-FORWARD                             ACCEPT marked and established forwarded traffic
           KUBE-FIREWALL                            DROP martian traffic to 127/8 (route_localnet)

Masquerading (the mark is 1<<`masquerade_bit`, 0x4000 by default) is applied where a reply
would otherwise not come back through this node: traffic to a cluster IP from outside
`cluster_cidr` (the node itself, other hosts), NodePort and external-IP traffic, and a pod
reaching itself through its Service (hairpin).

Every chain the text declares is flushed and rewritten by the restore (`--noflush` leaves the
rest of the tables alone), and service chains that exist but are no longer wanted are
declared and deleted in the same transaction, so one restore moves the node atomically from
whatever it had to exactly this model. The jumps from the built-in chains are not part of
the text (see `JUMPS`): they are ensured separately and never flushed.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from proxy.model import Endpoint, ProxyModel, ServicePort

__all__ = ["JUMPS", "NAT_CHAINS", "FILTER_CHAINS", "RuleSet", "render_rules", "is_service_chain"]

KUBE_SERVICES = "KUBE-SERVICES"
KUBE_NODEPORTS = "KUBE-NODEPORTS"
KUBE_EXTERNAL_SERVICES = "KUBE-EXTERNAL-SERVICES"
KUBE_POSTROUTING = "KUBE-POSTROUTING"
KUBE_MARK_MASQ = "KUBE-MARK-MASQ"
KUBE_FORWARD = "KUBE-FORWARD"
KUBE_FIREWALL = "KUBE-FIREWALL"

NAT_CHAINS = (KUBE_SERVICES, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_MARK_MASQ)
FILTER_CHAINS = (KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, KUBE_FORWARD, KUBE_FIREWALL)
SERVICE_CHAIN_PREFIXES = ("KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-SEP-")

_NEW = ("-m", "conntrack", "--ctstate", "NEW")
JUMPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("nat", "PREROUTING", ("-m", "comment", "--comment", "kubernetes service portals", "-j", KUBE_SERVICES)),
    ("nat", "OUTPUT", ("-m", "comment", "--comment", "kubernetes service portals", "-j", KUBE_SERVICES)),
    ("nat", "POSTROUTING", ("-m", "comment", "--comment", "kubernetes postrouting rules", "-j", KUBE_POSTROUTING)),
    ("filter", "INPUT", (*_NEW, "-m", "comment", "--comment", "kubernetes externally-visible service portals",
                         "-j", KUBE_EXTERNAL_SERVICES)),
    ("filter", "INPUT", ("-j", KUBE_FIREWALL)),
    ("filter", "FORWARD", ("-m", "comment", "--comment", "kubernetes forwarding rules", "-j", KUBE_FORWARD)),
    ("filter", "FORWARD", (*_NEW, "-m", "comment", "--comment", "kubernetes service portals", "-j", KUBE_SERVICES)),
    ("filter", "FORWARD", (*_NEW, "-m", "comment", "--comment", "kubernetes externally-visible service portals",
                           "-j", KUBE_EXTERNAL_SERVICES)),
    ("filter", "OUTPUT", (*_NEW, "-m", "comment", "--comment", "kubernetes service portals", "-j", KUBE_SERVICES)),
    ("filter", "OUTPUT", ("-j", KUBE_FIREWALL)),
)
"""(table, built-in chain, rule) jumps into our chains, each ensured once at the top of its chain."""


def is_service_chain(name: str) -> bool:
    """Whether `name` is a per-service or per-endpoint chain this proxy creates and deletes."""
    return name.startswith(SERVICE_CHAIN_PREFIXES)


def _hash(text: str) -> str:
    """kube-proxy's chain suffix: the first 16 characters of base32(sha256(text))."""
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode()[:16]


def _chain(prefix: str, sp: ServicePort) -> str:
    return f"KUBE-{prefix}-" + _hash(str(sp.name) + sp.protocol.lower())


def _sep_chain(sp: ServicePort, ep: Endpoint) -> str:
    return "KUBE-SEP-" + _hash(str(sp.name) + sp.protocol.lower() + str(ep))


@dataclass(frozen=True)
class RuleSet:
    """The restore input and what it holds."""

    text: str
    nat_rules: int
    filter_rules: int
    chains: frozenset[str]
    """The per-service chains of the nat table that this text keeps."""


class _Table:
    def __init__(self, name: str, chains: Iterable[str]) -> None:
        self.name = name
        self.chains: list[str] = list(chains)
        self._declared = set(self.chains)  # membership in O(1): a table may hold tens of thousands of chains
        self.rules: list[str] = []
        self.deleted: list[str] = []

    def has_chain(self, name: str) -> bool:
        return name in self._declared

    def chain(self, name: str) -> None:
        if name not in self._declared:
            self._declared.add(name)
            self.chains.append(name)

    def add(self, chain: str, *args: str, comment: str | None = None) -> None:
        words = ["-A", chain, *(("-m", "comment", "--comment", f'"{comment}"') if comment else ()), *args]
        self.rules.append(" ".join(words))

    def render(self) -> list[str]:
        declared = [*self.chains, *self.deleted]
        return [f"*{self.name}", *(f":{c} - [0:0]" for c in declared), *self.rules,
                *(f"-X {c}" for c in self.deleted), "COMMIT"]


def _match(sp: ServicePort, port: int, destination: str | None = None) -> tuple[str, ...]:
    proto = sp.protocol.lower()
    dest = ("-d", f"{destination}/32") if destination else ()
    return (*dest, "-p", proto, "-m", proto, "--dport", str(port))


def render_rules(model: ProxyModel, *, cluster_cidr: str | None = None, masquerade_bit: int = 14,
                 existing_chains: Iterable[str] = ()) -> RuleSet:
    """The restore input that programs exactly `model`; `existing_chains` are the nat table's chains now.

    Pure and deterministic: the same arguments give the same text.
    """
    mark = f"{1 << masquerade_bit:#x}"
    nat, filt = _Table("nat", NAT_CHAINS), _Table("filter", FILTER_CHAINS)
    for sp in model.service_ports:
        _service_port(nat, filt, sp, cluster_cidr=cluster_cidr)
    nat.add(KUBE_SERVICES, "-m", "addrtype", "--dst-type", "LOCAL", "-j", KUBE_NODEPORTS,
            comment="kubernetes service nodeports; NOTE: this must be the last rule in this chain")
    nat.add(KUBE_MARK_MASQ, "-j", "MARK", "--or-mark", mark)
    nat.add(KUBE_POSTROUTING, "-m", "mark", "!", "--mark", f"{mark}/{mark}", "-j", "RETURN")
    nat.add(KUBE_POSTROUTING, "-j", "MARK", "--xor-mark", mark)
    nat.add(KUBE_POSTROUTING, "-j", "MASQUERADE", "--random-fully", comment="kubernetes service traffic requiring SNAT")
    filt.add(KUBE_FORWARD, "-m", "mark", "--mark", f"{mark}/{mark}", "-j", "ACCEPT",
             comment="kubernetes forwarding rules")
    filt.add(KUBE_FORWARD, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT",
             comment="kubernetes forwarding conntrack rule")
    filt.add(KUBE_FIREWALL, "-d", "127.0.0.0/8", "!", "-s", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate",
             "RELATED,ESTABLISHED,DNAT", "-j", "DROP", comment="block incoming localnet connections")
    kept = frozenset(c for c in nat.chains if is_service_chain(c))
    nat.deleted = sorted({c for c in existing_chains if is_service_chain(c)} - kept)
    lines = [*filt.render(), *nat.render()]
    return RuleSet(text="\n".join(lines) + "\n", nat_rules=len(nat.rules), filter_rules=len(filt.rules),
                   chains=kept)


def _service_port(nat: _Table, filt: _Table, sp: ServicePort, *, cluster_cidr: str | None) -> None:
    name, svc, ext = str(sp.name), _chain("SVC", sp), _chain("EXT", sp)
    external = sp.local_endpoints if sp.local_endpoints is not None else sp.endpoints
    has_external = bool(sp.node_port or sp.external_ips)
    if sp.endpoints:
        nat.chain(svc)
        nat.add(KUBE_SERVICES, *_match(sp, sp.port, sp.cluster_ip), "-j", svc, comment=f"{name} cluster IP")
        if cluster_cidr:
            nat.add(svc, "!", "-s", cluster_cidr, *_match(sp, sp.port, sp.cluster_ip), "-j", KUBE_MARK_MASQ,
                    comment=f"{name} cluster IP")
        _balance(nat, svc, sp, sp.endpoints)
    else:
        filt.add(KUBE_SERVICES, *_match(sp, sp.port, sp.cluster_ip), "-j", "REJECT",
                 comment=f"{name} has no endpoints")
    if not has_external:
        return
    # As upstream: with endpoints anywhere, external traffic enters KUBE-EXT (which lets pod and
    # node traffic through under the Local policy); what finds no usable endpoint there is
    # rejected (none at all) or dropped (none on this node) by the filter table, which sees the
    # destination still local only when nothing rewrote it.
    if sp.endpoints:
        _external_chain(nat, sp, svc, ext, cluster_cidr=cluster_cidr)
    target, why = ("DROP", "has no local endpoints") if sp.endpoints else ("REJECT", "has no endpoints")
    for ip in sp.external_ips:
        if sp.endpoints:
            nat.add(KUBE_SERVICES, *_match(sp, sp.port, ip), "-j", ext, comment=f"{name} external IP")
        if not external:
            filt.add(KUBE_EXTERNAL_SERVICES, *_match(sp, sp.port, ip), "-j", target, comment=f"{name} {why}")
    if sp.node_port:
        if sp.endpoints:
            nat.add(KUBE_NODEPORTS, *_match(sp, sp.node_port), "-j", ext, comment=name)
        if not external:
            filt.add(KUBE_EXTERNAL_SERVICES, "-m", "addrtype", "--dst-type", "LOCAL", *_match(sp, sp.node_port),
                     "-j", target, comment=f"{name} {why}")


def _external_chain(nat: _Table, sp: ServicePort, svc: str, ext: str, *, cluster_cidr: str | None) -> None:
    """KUBE-EXT: masquerade and go cluster-wide (Cluster policy), or stay on this node (Local)."""
    name = str(sp.name)
    nat.chain(ext)
    if sp.local_endpoints is None:
        nat.add(ext, "-j", KUBE_MARK_MASQ, comment=f"masquerade traffic for {name} external destinations")
        nat.add(ext, "-j", svc)
        return
    # Local policy keeps the client's address; traffic from pods and from the node itself is
    # still balanced over the whole cluster, as upstream does.
    if cluster_cidr:
        nat.add(ext, "-s", cluster_cidr, "-j", svc, comment=f"pod traffic for {name} external destinations")
    nat.add(ext, "-m", "addrtype", "--src-type", "LOCAL", "-j", KUBE_MARK_MASQ,
            comment=f"masquerade LOCAL traffic for {name} external destinations")
    nat.add(ext, "-m", "addrtype", "--src-type", "LOCAL", "-j", svc,
            comment=f"route LOCAL traffic for {name} external destinations")
    if sp.local_endpoints:
        svl = _chain("SVL", sp)
        nat.chain(svl)
        nat.add(ext, "-j", svl)
        _balance(nat, svl, sp, sp.local_endpoints)


def _balance(nat: _Table, chain: str, sp: ServicePort, endpoints: tuple[Endpoint, ...]) -> None:
    """Spread new connections evenly: endpoint i of n is taken with probability 1/(n-i)."""
    name, n = str(sp.name), len(endpoints)
    seps = [_sep_chain(sp, ep) for ep in endpoints]
    if sp.affinity_seconds is not None:
        for ep, sep in zip(endpoints, seps, strict=True):
            nat.add(chain, "-m", "recent", "--name", sep, "--rcheck", "--seconds", str(sp.affinity_seconds),
                    "--reap", "-j", sep, comment=f"{name} -> {ep}")
    for i, (ep, sep) in enumerate(zip(endpoints, seps, strict=True)):
        chance = ("-m", "statistic", "--mode", "random", "--probability", f"{1.0 / (n - i):0.10f}") \
            if i < n - 1 else ()
        nat.add(chain, *chance, "-j", sep, comment=f"{name} -> {ep}")
        if not nat.has_chain(sep):
            nat.chain(sep)
            proto = sp.protocol.lower()
            affinity = ("-m", "recent", "--name", sep, "--set") if sp.affinity_seconds is not None else ()
            nat.add(sep, "-s", f"{ep.ip}/32", "-j", KUBE_MARK_MASQ, comment=name)
            nat.add(sep, "-p", proto, *affinity, "-m", proto, "-j", "DNAT", "--to-destination", str(ep),
                    comment=name)
