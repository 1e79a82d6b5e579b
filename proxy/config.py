"""The proxy's frozen configuration, built once from flags in `__main__`.

Flag names follow kube-proxy's where one exists (`--proxy-mode`, `--hostname-override`,
`--cluster-cidr`, `--healthz-bind-address`, `--iptables-sync-period`,
`--iptables-min-sync-period`, `--iptables-masquerade-bit`, `--cleanup`); times are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kube.tracing import TracingConfig

__all__ = ["FIELD_MANAGER", "USER_AGENT", "ProxyConfig"]

FIELD_MANAGER = "kube-proxy"
USER_AGENT = "kube-proxy/picokube"


@dataclass(frozen=True)
class ProxyConfig:
    """Everything one node's proxy needs.

    `mode` is "iptables" or "simulated"; `cluster_cidr` (the pods' addresses) lets traffic
    from elsewhere to a cluster IP be masqueraded; `sync_period` bounds how long the rules go
    without a full rewrite, `min_sync_period` how often a burst of changes may rewrite them;
    `healthz_bind_address` is HOST:PORT (port 0: any free port, empty: no server);
    `status_file`, when set, receives a JSON report after every sync.
    """

    node_name: str
    kubeconfig: str | None = None
    mode: str = "iptables"
    cluster_cidr: str | None = None
    masquerade_bit: int = 14
    sync_period: float = 30.0
    min_sync_period: float = 1.0
    healthz_bind_address: str = "0.0.0.0:10256"
    status_file: Path | None = None
    cleanup: bool = False
    log_level: str = "INFO"
    tracing: TracingConfig = TracingConfig()

    @property
    def healthz_host_port(self) -> tuple[str, int] | None:
        if not self.healthz_bind_address:
            return None
        host, _, port = self.healthz_bind_address.rpartition(":")
        return host or "0.0.0.0", int(port)
