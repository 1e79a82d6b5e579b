"""The cluster CA and serving certificate: real verification, real TLS handshakes, reuse."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from picokube.pki import ClusterPki, ensure_cluster_pki, issue_client_certificate


@pytest.fixture
def pki(tmp_path: Path) -> ClusterPki:
    return ensure_cluster_pki(tmp_path / "pki")


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_serving_certificate_is_signed_by_the_ca_and_carries_the_sans(pki: ClusterPki) -> None:
    ca, serving = load(pki.ca_cert), load(pki.apiserver_cert)
    serving.verify_directly_issued_by(ca)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {"localhost", "apiserver", "kubernetes", "kubernetes.default", "kubernetes.default.svc"} <= set(
        sans.get_values_for_type(x509.DNSName))
    assert {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")} <= set(
        sans.get_values_for_type(x509.IPAddress))
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    lifetime = ca.not_valid_after_utc - ca.not_valid_before_utc
    assert lifetime.days >= 3650
    assert 365 <= (serving.not_valid_after_utc - serving.not_valid_before_utc).days < 400


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_openssl_verifies_the_serving_certificate(pki: ClusterPki) -> None:
    result = subprocess.run(["openssl", "verify", "-CAfile", str(pki.ca_cert), "-purpose", "sslserver",
                             str(pki.apiserver_cert)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("OK")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_tls_client_trusting_the_ca_accepts_the_server(pki: ClusterPki, host: str) -> None:
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(pki.apiserver_cert, pki.apiserver_key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(b"ok")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client_ctx = ssl.create_default_context(cafile=str(pki.ca_cert))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            client_ctx.wrap_socket(raw, server_hostname=host) as tls:
        assert tls.recv(2) == b"ok"
    thread.join(timeout=5)
    listener.close()


def test_second_run_reuses_valid_files(pki: ClusterPki) -> None:
    before = {p: p.read_bytes() for p in (pki.ca_cert, pki.ca_key, pki.apiserver_cert, pki.apiserver_key)}
    ensure_cluster_pki(pki.directory)
    assert {p: p.read_bytes() for p in before} == before


def test_missing_serving_certificate_is_reissued_by_the_same_ca(pki: ClusterPki) -> None:
    ca_before = pki.ca_cert.read_bytes()
    pki.apiserver_cert.unlink()
    ensure_cluster_pki(pki.directory)
    assert pki.ca_cert.read_bytes() == ca_before
    load(pki.apiserver_cert).verify_directly_issued_by(load(pki.ca_cert))


def test_corrupt_ca_replaces_ca_and_serving_certificate(pki: ClusterPki) -> None:
    old_serving = pki.apiserver_cert.read_bytes()
    pki.ca_key.write_text("garbage")
    ensure_cluster_pki(pki.directory)
    assert pki.apiserver_cert.read_bytes() != old_serving
    load(pki.apiserver_cert).verify_directly_issued_by(load(pki.ca_cert))


def test_private_keys_are_owner_only(pki: ClusterPki) -> None:
    for key in (pki.ca_key, pki.apiserver_key):
        assert key.stat().st_mode & 0o777 == 0o600


def test_client_certificate_names_user_and_groups(pki: ClusterPki, tmp_path: Path) -> None:
    cert_pem, key_pem = issue_client_certificate(pki, user="jane", groups=["dev", "ops"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    cert.verify_directly_issued_by(load(pki.ca_cert))
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["jane"]
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["dev", "ops"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku
    # The key belongs to the certificate: an mTLS client context accepts the pair.
    (tmp_path / "jane.crt").write_bytes(cert_pem)
    (tmp_path / "jane.key").write_bytes(key_pem)
    ssl.create_default_context().load_cert_chain(tmp_path / "jane.crt", tmp_path / "jane.key")


def test_the_kubernetes_service_ip_is_added_and_the_ca_kept(tmp_path: Path) -> None:
    """In-cluster clients dial the `kubernetes` Service's IP and check the certificate against it."""
    plain = ensure_cluster_pki(tmp_path / "pki")
    ca_before = plain.ca_cert.read_bytes()
    with_service = ensure_cluster_pki(tmp_path / "pki", ips=("10.96.0.1",))
    sans = load(with_service.apiserver_cert).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("10.96.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert with_service.ca_cert.read_bytes() == ca_before
    serving = with_service.apiserver_cert.read_bytes()
    assert ensure_cluster_pki(tmp_path / "pki", ips=("10.96.0.1",)).apiserver_cert.read_bytes() == serving
