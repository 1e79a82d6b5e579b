"""`python -m apiserver`: run the API server over HTTPS (uvicorn), talking to etcd, until SIGTERM/SIGINT.

uvicorn (`serving.py`) serves the app on this process's one event loop, or with `--workers N`
this process runs N serving processes on one address (`workers.py`); `kube.component` owns logging,
signals and exit codes as for every component. A signal asks uvicorn for its graceful
shutdown (in-flight requests get `timeout_graceful_shutdown` seconds, then the app's
lifespan shutdown closes watches and etcd); a second signal cancels outright. Exit status
0 on a signal, 1 on a failure (for example etcd unreachable at startup), 2 on bad flags.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from apiserver.config import MAX_WORKERS, ApiServerConfig
from apiserver.registry.service.ranges import parse_port_range
from apiserver.storage.encryption_config import load_encryption_config
from apiserver.storage.etcd_channel import parse_endpoint
from kube.component import UsageError, parse_flags, run_component
from kube.duration import parse_go_duration

PROG = "picokube apiserver"


def parse_args(argv: list[str] | None = None) -> ApiServerConfig:
    """The config the flags ask for; argparse exits 2 on a malformed flag, UsageError on a bad value."""
    p = argparse.ArgumentParser(prog=PROG, description="The picokube API server.")
    p.add_argument("--etcd-endpoints", required=True, help="comma-separated etcd client URLs (http or https)")
    p.add_argument("--etcd-cafile", type=Path, help="the CA bundle that verifies etcd's serving certificate")
    p.add_argument("--etcd-certfile", type=Path, help="the client certificate presented to etcd (PEM)")
    p.add_argument("--etcd-keyfile", type=Path, help="the key of --etcd-certfile (PEM)")
    p.add_argument("--bind-address", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6443)
    p.add_argument("--tls-cert-file", type=Path)
    p.add_argument("--tls-private-key-file", type=Path)
    p.add_argument("--client-ca-file", type=Path)
    p.add_argument("--token-auth-file", type=Path)
    p.add_argument("--authorization-mode", default="Node,RBAC")
    p.add_argument("--enable-bootstrap-token-auth", nargs="?", const="true", default="false",
                   choices=["true", "false"],
                   help="authenticate bootstrap tokens (Secrets bootstrap-token-<id> in kube-system)")
    p.add_argument("--service-account-signing-key-file", type=Path)
    p.add_argument("--service-account-issuer", default="https://kubernetes.default.svc.cluster.local",
                   help="the iss of ServiceAccount tokens and the OIDC discovery issuer")
    p.add_argument("--api-audiences", default="",
                   help="comma-separated audiences a token must name (default: the issuer)")
    p.add_argument("--kubelet-client-certificate", type=Path)
    p.add_argument("--kubelet-client-key", type=Path)
    p.add_argument("--kubelet-certificate-authority", type=Path)
    p.add_argument("--etcd-prefix", default="/registry")
    p.add_argument("--min-request-timeout", type=int, default=1800)
    p.add_argument("--request-timeout", default="1m0s",
                   help="how long a request that is not long-running may take before a 504 (a Go duration)")
    p.add_argument("--max-requests-inflight", type=int, default=400,
                   help="read-only requests served at once before 429s (0: no limit)")
    p.add_argument("--max-mutating-requests-inflight", type=int, default=200,
                   help="mutating requests served at once before 429s (0: no limit)")
    p.add_argument("--max-long-running-requests-per-user", type=int, default=1000,
                   help="open watches, logs, exec and proxy requests one user may hold (0: no cap)")
    p.add_argument("--log-level", default="INFO")
    p.add_argument("--watch-cache", default="true", choices=["true", "false"])
    p.add_argument("--audit-log-path", type=Path, help="write one JSON audit event per request here")
    p.add_argument("--etcd-compaction-interval", type=float, default=300.0,
                   help="seconds between compactions of etcd history older than this (0 disables)")
    p.add_argument("--trace-store-file", type=Path, help="keep received spans here (JSON lines, bounded)")
    p.add_argument("--tracing", default="true", choices=["true", "false"])
    p.add_argument("--otlp-endpoint", help="also export spans to this OTLP/HTTP collector (http://host:4318)")
    p.add_argument("--trace-retention-seconds", type=float, default=3600.0)
    p.add_argument("--trace-max-spans", type=int, default=200_000)
    p.add_argument("--service-cluster-ip-range", default="10.96.0.0/12",
                   help="CIDR cluster IPs are allocated from (its first address goes to the kubernetes Service)")
    p.add_argument("--service-node-port-range", default="30000-32767", help="node ports are allocated from this range")
    p.add_argument("--advertise-address", help="the address the kubernetes Service's endpoints name")
    p.add_argument("--advertise-port", type=int,
                   help="the port the kubernetes Service's endpoints name (default --port; a load balancer's "
                        "port when several API servers share one address behind it)")
    p.add_argument("--disable-admission-plugins", default="",
                   help="comma-separated admission plugins to leave out of the default chain")
    p.add_argument("--service-account-extend-token-expiration", default="true", choices=["true", "false"],
                   help="sign pod-bound 3607-second tokens for a year, warning after the hour")
    p.add_argument("--encryption-provider-config", type=Path,
                   help="an EncryptionConfiguration file: the resources encrypted at rest and their keys")
    p.add_argument("--workers", type=int, default=1,
                   help="serving processes sharing --bind-address:--port, each a whole API server "
                        "(1: serve in this process)")
    p.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)  # a worker's socket, from its parent
    a = p.parse_args(argv)
    if not 1 <= a.workers <= MAX_WORKERS:
        raise UsageError(f"--workers: must be between 1 and {MAX_WORKERS}")
    if a.encryption_provider_config is not None:
        try:
            load_encryption_config(a.encryption_provider_config)
        except ValueError as e:
            raise UsageError(f"--encryption-provider-config: {e}") from None
    request_timeout = check_limits(a)
    check_service_ranges(a.service_cluster_ip_range, a.service_node_port_range, a.advertise_address)
    for endpoint in (e.strip() for e in a.etcd_endpoints.split(",") if e.strip()):
        try:
            parse_endpoint(endpoint)
        except ValueError as e:
            raise UsageError(f"--etcd-endpoints: {e}") from None
    if (a.etcd_certfile is None) != (a.etcd_keyfile is None):
        raise UsageError("--etcd-certfile and --etcd-keyfile must be given together")
    for flag, path in (("--etcd-cafile", a.etcd_cafile), ("--etcd-certfile", a.etcd_certfile),
                       ("--etcd-keyfile", a.etcd_keyfile)):
        if path is not None and not path.is_file():
            raise UsageError(f"{flag}: {path} is not a readable file")
    if a.advertise_port is not None and not 0 < a.advertise_port < 65536:
        raise UsageError(f"--advertise-port: {a.advertise_port} is not a TCP port")
    if not (a.tls_cert_file and a.tls_private_key_file):
        raise UsageError("--tls-cert-file and --tls-private-key-file are required: the API server serves HTTPS only")
    return ApiServerConfig(
        etcd_endpoints=tuple(e.strip() for e in a.etcd_endpoints.split(",") if e.strip()),
        bind_address=a.bind_address, port=a.port, tls_cert_file=a.tls_cert_file,
        tls_private_key_file=a.tls_private_key_file, client_ca_file=a.client_ca_file,
        token_auth_file=a.token_auth_file, authorization_mode=a.authorization_mode,
        enable_bootstrap_token_auth=a.enable_bootstrap_token_auth == "true",
        service_account_signing_key_file=a.service_account_signing_key_file,
        service_account_issuer=a.service_account_issuer,
        api_audiences=tuple(x.strip() for x in a.api_audiences.split(",") if x.strip()),
        kubelet_client_certificate=a.kubelet_client_certificate, kubelet_client_key=a.kubelet_client_key,
        kubelet_certificate_authority=a.kubelet_certificate_authority, etcd_prefix=a.etcd_prefix,
        etcd_cafile=a.etcd_cafile, etcd_certfile=a.etcd_certfile, etcd_keyfile=a.etcd_keyfile,
        min_request_timeout=a.min_request_timeout, request_timeout=request_timeout,
        max_requests_inflight=a.max_requests_inflight, max_mutating_requests_inflight=a.max_mutating_requests_inflight,
        max_long_running_requests_per_user=a.max_long_running_requests_per_user, log_level=a.log_level,
        watch_cache=a.watch_cache == "true",
        etcd_compaction_interval=a.etcd_compaction_interval, audit_log_path=a.audit_log_path,
        trace_store_path=a.trace_store_file, tracing=a.tracing == "true", otlp_endpoint=a.otlp_endpoint,
        trace_retention_seconds=a.trace_retention_seconds, trace_max_spans=a.trace_max_spans,
        service_cluster_ip_range=a.service_cluster_ip_range, service_node_port_range=a.service_node_port_range,
        advertise_address=a.advertise_address, advertise_port=a.advertise_port,
        disable_admission_plugins=tuple(x.strip() for x in a.disable_admission_plugins.split(",") if x.strip()),
        service_account_extend_token_expiration=a.service_account_extend_token_expiration == "true",
        encryption_provider_config=a.encryption_provider_config,
        workers=a.workers, listen_fd=a.listen_fd,
    )


def check_limits(a: argparse.Namespace) -> float:
    """The request timeout in seconds; UsageError for it or an in-flight limit out of range."""
    for flag in ("max_requests_inflight", "max_mutating_requests_inflight", "max_long_running_requests_per_user"):
        if getattr(a, flag) < 0:
            raise UsageError(f"--{flag.replace('_', '-')}: must not be negative")
    try:
        seconds = parse_go_duration(a.request_timeout)
    except ValueError as e:
        raise UsageError(f"--request-timeout: {e}") from None
    if seconds <= 0:
        raise UsageError("--request-timeout: must be positive")
    return seconds


def check_service_ranges(cidr: str, ports: str, advertise: str | None) -> None:
    """UsageError for a malformed --service-cluster-ip-range, --service-node-port-range or --advertise-address."""
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        raise UsageError(f"--service-cluster-ip-range: {cidr!r} is not a CIDR") from None
    if network.num_addresses < 4:
        raise UsageError(f"--service-cluster-ip-range: {cidr} is too small")
    try:
        parse_port_range(ports)
    except ValueError:
        raise UsageError(f"--service-node-port-range: {ports!r} is not a port range (30000-32767)") from None
    if advertise is not None:
        try:
            ipaddress.ip_address(advertise)
        except ValueError:
            raise UsageError(f"--advertise-address: {advertise!r} is not an IP address") from None


def main(argv: list[str] | None = None) -> int:
    config = parse_flags(parse_args, argv, prog=PROG)
    if config.workers > 1:
        from apiserver.workers import run_workers  # the parent imports no more than it runs

        return run_workers(config, sys.argv[1:] if argv is None else argv)
    if config.listen_fd is not None:
        from apiserver.workers import die_with_parent

        die_with_parent()
    from apiserver.serving import StartupFailed, build_server, serve

    server = build_server(config)
    return run_component(lambda: serve(server, config.listen_fd), name="apiserver", log_level=config.log_level,
                         failures={StartupFailed: "Cannot start the API server"}, on_stop=server.request_shutdown)


if __name__ == "__main__":
    sys.exit(main())
