"""The kubelet's frozen configuration, built once from flags in `__main__`."""

from __future__ import annotations

from dataclasses import dataclass, field

from kube.tracing import TracingConfig

__all__ = ["KubeletConfig", "FIELD_MANAGER", "USER_AGENT", "NODE_LEASE_NAMESPACE"]

FIELD_MANAGER = "kubelet"
USER_AGENT = "kubelet/picokube"
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass(frozen=True)
class KubeletConfig:
    """Everything the kubelet needs to know about its node; times are seconds.

    `node_status_update_frequency` paces the Lease renewal (upstream: every 10 s) and
    `node_status_report_frequency` the Node status rewrite (upstream: 5 min, here 1 min);
    `node_labels` and `register_with_taints` are set when the Node is first created;
    `allocatable` is what the scheduler may hand out (cri nodes hold back eviction reserves);
    `port` 0 lets the OS choose the kubelet server's port, which the Node then publishes in
    `status.daemonEndpoints.kubeletEndpoint.Port`. `cluster_dns` (the kube-dns Service's
    address), `cluster_domain` and `resolv_conf` (the host's resolver file; "" for none) make
    each pod's resolv.conf (`kubelet.dns`). ConfigMap, Secret, downwardAPI and projected
    volumes are rewritten on every sync of their pod, so an update reaches the files within
    the periodic resync (every 10 s, see `kubelet.kubelet`; upstream's is 1 min).
    """

    node_name: str
    kubeconfig: str | None = None
    runtime: str = "simulated"
    container_runtime_endpoint: str = "unix:///run/containerd/containerd.sock"
    pod_log_dir: str = "/var/log/pods"
    root_dir: str = "/var/lib/kubelet"
    """Where pods' volumes are prepared: <root_dir>/pods/<uid>/volumes/<plugin>/<volume>."""
    capacity: dict[str, str] = field(default_factory=lambda: {"cpu": "4", "memory": "8Gi", "pods": "110"})
    allocatable: dict[str, str] | None = None  # None: the same as capacity
    pod_cidr: str = "10.244.1.0/24"
    pod_start_delay: float = 0.0
    address: str = "127.0.0.1"
    port: int = 0
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    client_ca_file: str | None = None
    node_status_update_frequency: float = 10.0
    node_status_report_frequency: float = 60.0
    node_labels: dict[str, str] = field(default_factory=dict)
    register_with_taints: tuple[dict[str, str], ...] = ()
    node_lease_duration_seconds: int = 40
    housekeeping_interval: float = 2.0
    relist_interval: float = 1.0
    cluster_dns: tuple[str, ...] = ()
    cluster_domain: str = "cluster.local"
    resolv_conf: str = "/etc/resolv.conf"
    max_container_restart_period: float = 300.0  # CrashLoopBackOff's cap (and first delay, when below 10 s)
    workers: int = 16
    log_level: str = "INFO"
    tracing: TracingConfig = TracingConfig()
    local_volume_dir: str | None = None
    """Where local-path PersistentVolumes of this node live (published as the Node annotation
    picokube.io/local-volume-dir); None: the node takes no local-path volumes."""
