"""Each pod's resolv.conf, per its dnsPolicy, as the kubelet's DNS configurer builds it.

Mirrors pkg/kubelet/network/dns (`Configurer.GetPodDNS`): the result is the CRI's
DNSConfig, which the runtime writes as the pod's /etc/resolv.conf.

- `ClusterFirst` (the default): the cluster DNS (`--cluster-dns`) is the only nameserver;
  the search path is `<ns>.svc.<domain> svc.<domain> <domain>` then the host's searches
  (duplicates dropped); options `ndots:5`. A host-network pod with ClusterFirst gets
  `Default` instead; `ClusterFirstWithHostNet` is ClusterFirst whatever the network. Without
  a `--cluster-dns` the kubelet falls back to `Default` and says so in a `MissingClusterDNS`
  warning;
- `Default`: the host's resolv.conf (`--resolv-conf`); with `--resolv-conf ""`,
  `nameserver 127.0.0.1` and `search .`, as upstream;
- `None`: nothing but the pod's `dnsConfig`.
Then the pod's `dnsConfig` is merged in: nameservers and searches appended (duplicates
dropped), options merged by name (the pod's value wins). Finally the limits: at most 3
nameservers and 32 search domains of at most 253 characters, 2048 in all (the line is cut
from the end); a cut is reported as a `DNSConfigForming` warning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kube.api import Pod
from kubelet.cri.interface import DNSConfig

__all__ = ["DNSConfigurer", "PodDNS", "parse_resolv_conf"]

MAX_NAMESERVERS = 3
MAX_SEARCH_PATHS = 32
MAX_SEARCH_CHARS = 2048
MAX_SEARCH_LENGTH = 253
DEFAULT_OPTIONS = ("ndots:5",)


def parse_resolv_conf(text: str) -> DNSConfig:
    """The nameservers, search domains (last line wins) and options of a resolv.conf (parseResolvConf)."""
    servers: list[str] = []
    searches: list[str] = []
    options: list[str] = []
    for line in text.splitlines():
        trimmed = line.strip()
        if trimmed.startswith("#"):
            continue
        fields = trimmed.split()
        if not fields:
            continue
        if fields[0] == "nameserver" and len(fields) >= 2:
            servers.append(fields[1])
        elif fields[0] == "search":
            searches = [s.removesuffix(".") for s in fields[1:] if s != "."]
        elif fields[0] == "options":
            options = _merge_options(options, fields[1:])
    return DNSConfig(tuple(servers), tuple(searches), tuple(options))


def _omit_duplicates(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _merge_options(existing: Iterable[str], extra: Iterable[str]) -> list[str]:
    """Options by name, in first-seen order; a later value replaces an earlier one."""
    merged: dict[str, str] = {}
    for option in (*existing, *extra):
        name, _, value = option.partition(":")
        merged[name] = value
    return [f"{name}:{value}" if value else name for name, value in merged.items()]


@dataclass(frozen=True)
class PodDNS:
    """A pod's DNSConfig and the warnings (reason, message) the kubelet records as events."""

    config: DNSConfig
    warnings: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True)
class DNSConfigurer:
    """The node's DNS settings: `--cluster-dns`, `--cluster-domain` and the host's resolv.conf.

    `host` is the parsed `--resolv-conf` (None for `--resolv-conf ""`). Pure: safe to share.
    """

    cluster_dns: tuple[str, ...] = ()
    cluster_domain: str = "cluster.local"
    host: DNSConfig | None = field(default_factory=DNSConfig)

    def _host(self) -> DNSConfig:
        if self.host is None:
            return DNSConfig(servers=("127.0.0.1",), searches=(".",))
        return self.host

    def _cluster_searches(self, namespace: str, host_searches: tuple[str, ...]) -> tuple[str, ...]:
        if not self.cluster_domain:
            return host_searches
        domain = self.cluster_domain
        return _omit_duplicates((f"{namespace}.svc.{domain}", f"svc.{domain}", domain, *host_searches))

    def pod_dns(self, pod: Pod) -> PodDNS:
        """The DNSConfig for `pod` (GetPodDNS); never raises."""
        spec, warnings = pod.spec, []
        policy = spec.dns_policy or "ClusterFirst"
        if policy == "ClusterFirst" and spec.host_network:
            policy = "Default"
        host = self._host()
        if policy == "None":
            config = DNSConfig()
        elif policy in ("ClusterFirst", "ClusterFirstWithHostNet") and self.cluster_dns:
            host_searches = self.host.searches if self.host is not None else ()
            config = DNSConfig(self.cluster_dns, self._cluster_searches(str(pod.metadata.namespace), host_searches),
                               DEFAULT_OPTIONS)
        else:
            if policy != "Default":
                warnings.append(("MissingClusterDNS", f"pod: \"{pod.metadata.name}_{pod.metadata.namespace}"
                                 f"({pod.metadata.uid})\". kubelet does not have ClusterDNS IP configured and cannot "
                                 f"create Pod using \"{policy}\" policy. Falling back to \"Default\" policy."))
            config = host
        extra = spec.dns_config
        if extra is not None:
            options = [f"{o.name}:{o.value}" if o.value else str(o.name) for o in extra.options or [] if o.name]
            config = DNSConfig(_omit_duplicates((*config.servers, *(extra.nameservers or []))),
                               _omit_duplicates((*config.searches, *(extra.searches or []))),
                               tuple(_merge_options(config.options, options)))
        return self._fit_limits(config, warnings)

    @staticmethod
    def _fit_limits(config: DNSConfig, warnings: list[tuple[str, str]]) -> PodDNS:
        servers = config.servers
        if len(servers) > MAX_NAMESERVERS:
            servers = servers[:MAX_NAMESERVERS]
            warnings.append(("DNSConfigForming", "Nameserver limits were exceeded, some nameservers have been "
                             f"omitted, the applied nameserver line is: {' '.join(servers)}"))
        searches = list(config.searches)
        exceeded = len(searches) > MAX_SEARCH_PATHS
        searches = searches[:MAX_SEARCH_PATHS]
        kept = [s for s in searches if len(s) <= MAX_SEARCH_LENGTH]
        exceeded = exceeded or len(kept) != len(searches)
        while kept and len(" ".join(kept)) > MAX_SEARCH_CHARS:
            kept.pop()
            exceeded = True
        if exceeded:
            warnings.append(("DNSConfigForming", "Search Line limits were exceeded, some search paths have been "
                             f"omitted, the applied search line is: {' '.join(kept)}"))
        return PodDNS(DNSConfig(servers, tuple(kept), config.options), tuple(warnings))
