"""The API server's configuration, built once from flags in `__main__` and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MAX_WORKERS", "ApiServerConfig"]

MAX_WORKERS = 64  # the most serving processes `--workers` (and `picokube up --apiserver-workers`) accepts


@dataclass(frozen=True)
class ApiServerConfig:
    etcd_endpoints: tuple[str, ...]
    bind_address: str = "127.0.0.1"
    port: int = 6443
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    client_ca_file: Path | None = None
    token_auth_file: Path | None = None
    # Bearer `<id>.<secret>` tokens backed by kube-system/bootstrap-token-<id> Secrets (a joining node's).
    enable_bootstrap_token_auth: bool = False
    # The RSA or EC key that signs ServiceAccount tokens (PEM); None: a fresh key per process.
    service_account_signing_key_file: Path | None = None
    # The `iss` of ServiceAccount tokens, also served by /.well-known/openid-configuration.
    service_account_issuer: str = "https://kubernetes.default.svc.cluster.local"
    # The audiences a token must name to authenticate here; empty: the issuer alone.
    api_audiences: tuple[str, ...] = ()
    # Authorizers in order (Node, RBAC, AlwaysAllow); the first with an opinion decides.
    authorization_mode: str = "Node,RBAC"
    # How the API server reaches kubelets for pods/log: its client certificate, and the CA
    # that signed the kubelets' serving certificates (default: client_ca_file).
    kubelet_client_certificate: Path | None = None
    kubelet_client_key: Path | None = None
    kubelet_certificate_authority: Path | None = None
    etcd_prefix: str = "/registry"
    # TLS towards https etcd endpoints (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`):
    # the CA of etcd's serving certificate and the client certificate etcd asks for.
    etcd_cafile: Path | None = None
    etcd_certfile: Path | None = None
    etcd_keyfile: Path | None = None
    # Requests with a body above this size are refused with 413 (kube-apiserver's limit is 3 MiB).
    max_request_bytes: int = 3 * 1024 * 1024
    # The etcd object size limit (etcd's --max-request-bytes, default 1.5 MiB).
    max_object_bytes: int = 1536 * 1024
    # Long-running watches stay open about this long without timeoutSeconds (kube: 30-60 min).
    min_request_timeout: int = 1800
    # The max-in-flight limit (`--max-requests-inflight`, `--max-mutating-requests-inflight`; 0: none)
    # and the open long-running requests (watches, exec, logs) one user may hold (0: no cap).
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    max_long_running_requests_per_user: int = 1000
    # Seconds a request that is not long-running may take before a 504 (`--request-timeout`).
    request_timeout: float = 60.0
    bootstrap_namespaces: tuple[str, ...] = field(default=("default", "kube-system", "kube-public", "kube-node-lease"))
    log_level: str = "INFO"
    # One audit.k8s.io/v1 Event per request as a JSON line (level Metadata); None: no audit log.
    audit_log_path: Path | None = None
    # Serve watches and resourceVersion=0 lists from memory (one etcd watch per resource).
    watch_cache: bool = True
    # Compact etcd history older than this many seconds, every this many seconds (0: never).
    etcd_compaction_interval: float = 300.0
    # Tracing: spans of writes (and every component's, received on /v1/traces) are kept here,
    # one JSON line per batch; None keeps them in memory only.
    trace_store_path: Path | None = None
    tracing: bool = True
    # Also send the API server's spans to this external OTLP/HTTP collector.
    otlp_endpoint: str | None = None
    # Spans are kept this many seconds, and at most this many.
    trace_retention_seconds: float = 3600.0
    trace_max_spans: int = 200_000
    # Services: cluster IPs come from this CIDR (its first address is the `kubernetes` Service's),
    # node ports from this range.
    service_cluster_ip_range: str = "10.96.0.0/12"
    service_node_port_range: str = "30000-32767"
    # The address the `kubernetes` Service's endpoints name; None: the bind address when it is a
    # routable one, else this host's primary address.
    advertise_address: str | None = None
    advertise_port: int | None = None  # None: port
    # Seconds between passes that reclaim cluster IPs and node ports no Service holds.
    service_repair_interval: float = 180.0
    # Admission plugins left out of the default chain (`--disable-admission-plugins`), by name.
    disable_admission_plugins: tuple[str, ...] = ()
    # Sign the kubelet's pod-bound 3607-second tokens for a year, warning after the hour
    # (`--service-account-extend-token-expiration`, upstream's default).
    service_account_extend_token_expiration: bool = True
    # An apiserver.config.k8s.io/v1 EncryptionConfiguration: which resources (Secrets, as a rule)
    # are encrypted at rest and with which keys (`--encryption-provider-config`); None: none are.
    encryption_provider_config: Path | None = None
    # Serving processes behind the one address (`--workers`, see workers.py); 1 serves in this process.
    workers: int = 1
    # A listening socket handed in by the parent of several workers; None: bind bind_address:port.
    listen_fd: int | None = None
