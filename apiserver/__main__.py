"""`python -m apiserver`: run the API server over HTTPS (uvicorn), talking to etcd."""

from __future__ import annotations

import argparse
import ssl
import sys
from pathlib import Path

import uvicorn

from kube.log import setup_logging
from apiserver.app import build_app
from apiserver.authn.x509 import PeerCertificateProtocol
from apiserver.config import ApiServerConfig


def parse_args(argv: list[str]) -> ApiServerConfig:
    p = argparse.ArgumentParser(prog="picokube apiserver", description="The picokube API server.")
    p.add_argument("--etcd-endpoints", required=True, help="comma-separated etcd client URLs")
    p.add_argument("--bind-address", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6443)
    p.add_argument("--tls-cert-file", type=Path)
    p.add_argument("--tls-private-key-file", type=Path)
    p.add_argument("--client-ca-file", type=Path)
    p.add_argument("--token-auth-file", type=Path)
    p.add_argument("--authorization-mode", default="Node,RBAC")
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
    p.add_argument("--log-level", default="INFO")
    p.add_argument("--watch-cache", default="true", choices=["true", "false"])
    p.add_argument("--audit-log-path", type=Path, help="write one JSON audit event per request here")
    p.add_argument("--etcd-compaction-interval", type=float, default=300.0,
                   help="seconds between compactions of etcd history older than this (0 disables)")
    a = p.parse_args(argv)
    return ApiServerConfig(
        etcd_endpoints=tuple(e.strip() for e in a.etcd_endpoints.split(",") if e.strip()),
        bind_address=a.bind_address, port=a.port, tls_cert_file=a.tls_cert_file,
        tls_private_key_file=a.tls_private_key_file, client_ca_file=a.client_ca_file,
        token_auth_file=a.token_auth_file, authorization_mode=a.authorization_mode,
        service_account_signing_key_file=a.service_account_signing_key_file,
        service_account_issuer=a.service_account_issuer,
        api_audiences=tuple(x.strip() for x in a.api_audiences.split(",") if x.strip()),
        kubelet_client_certificate=a.kubelet_client_certificate,
        kubelet_client_key=a.kubelet_client_key, kubelet_certificate_authority=a.kubelet_certificate_authority, etcd_prefix=a.etcd_prefix, min_request_timeout=a.min_request_timeout,
        log_level=a.log_level, watch_cache=a.watch_cache == "true",
        etcd_compaction_interval=a.etcd_compaction_interval, audit_log_path=a.audit_log_path,
    )


def main(argv: list[str] | None = None) -> None:
    config = parse_args(sys.argv[1:] if argv is None else argv)
    setup_logging(config.log_level, "apiserver")
    if not (config.tls_cert_file and config.tls_private_key_file):
        sys.exit("error: --tls-cert-file and --tls-private-key-file are required: the API server serves HTTPS only")
    client_auth: dict[str, object] = {}
    if config.client_ca_file:  # ask for (but do not require) a client certificate signed by this CA
        client_auth = {"ssl_ca_certs": str(config.client_ca_file), "ssl_cert_reqs": ssl.CERT_OPTIONAL,
                       "http": PeerCertificateProtocol}
    uvicorn.run(build_app(config), host=config.bind_address, port=config.port, log_level="warning",
                ssl_certfile=str(config.tls_cert_file), ssl_keyfile=str(config.tls_private_key_file),
                access_log=False, timeout_graceful_shutdown=3, lifespan="on", **client_auth)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
