"""The cluster DNS server's frozen configuration, built once from flags in `__main__`.

Flag names follow the kubelet's (`--cluster-domain`, `--resolv-conf`) and kube-dns's
(`--dns-bind-address`, `--dns-port`) where one exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from kube.tracing import TracingConfig

__all__ = ["DEFAULT_CLUSTER_DNS_IP", "FIELD_MANAGER", "USER_AGENT", "ClusterDNSConfig"]

FIELD_MANAGER = "picokube-dns"
USER_AGENT = "picokube-dns/picokube"
DEFAULT_CLUSTER_DNS_IP = "10.96.0.10"
"""The tenth address of the default service range, where kubeadm puts kube-dns."""


@dataclass(frozen=True)
class ClusterDNSConfig:
    """Everything the DNS server needs.

    It listens on `bind_address:port` (UDP and TCP; port 0 picks a free one). With `publish`
    it keeps the `kube-dns` Service in `kube-system` (cluster IP `service_ip`, ports 53/UDP
    `dns` and 53/TCP `dns-tcp`) and that Service's Endpoints and EndpointSlice pointing at
    `advertise_address` and the port it listens on, so the node proxies send the cluster
    IP's traffic here. Names outside `cluster_domain` are forwarded to the `nameserver`s of
    `resolv_conf`, each given `upstream_timeout` seconds. Answers carry `ttl` seconds.
    """

    kubeconfig: str | None = None
    cluster_domain: str = "cluster.local"
    bind_address: str = "0.0.0.0"
    port: int = 53
    advertise_address: str | None = None
    service_ip: str = DEFAULT_CLUSTER_DNS_IP
    publish: bool = True
    resolv_conf: str = "/etc/resolv.conf"
    upstream_timeout: float = 2.0
    ttl: int = 5
    log_level: str = "INFO"
    tracing: TracingConfig = TracingConfig()
