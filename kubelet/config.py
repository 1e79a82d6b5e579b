"""The kubelet's frozen configuration, built once from flags in `__main__`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KubeletConfig", "FIELD_MANAGER", "USER_AGENT", "NODE_LEASE_NAMESPACE"]

FIELD_MANAGER = "kubelet"
USER_AGENT = "kubelet/picokube"
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass(frozen=True)
class KubeletConfig:
    """Everything the kubelet needs to know about its node; times are seconds.

    `node_status_update_frequency` paces both the Lease renewal and the Node status
    heartbeat (upstream renews the Lease every 10 s and keeps the status fresh on change);
    `port` 0 lets the OS choose the kubelet server's port, which the Node then publishes in
    `status.daemonEndpoints.kubeletEndpoint.Port`.
    """

    node_name: str
    kubeconfig: str | None = None
    runtime: str = "simulated"
    capacity: dict[str, str] = field(default_factory=lambda: {"cpu": "4", "memory": "8Gi", "pods": "110"})
    pod_cidr: str = "10.244.1.0/24"
    pod_start_delay: float = 0.0
    address: str = "127.0.0.1"
    port: int = 0
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    client_ca_file: str | None = None
    node_status_update_frequency: float = 10.0
    node_lease_duration_seconds: int = 40
    housekeeping_interval: float = 2.0
    relist_interval: float = 1.0
    workers: int = 16
    log_level: str = "INFO"
