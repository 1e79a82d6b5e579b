"""The compose init step: etcd's certificates name its service, every secret is private."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509

from picokube.compose.init import main


def test_init_issues_etcd_certificates_for_its_service_name(tmp_path: Path) -> None:
    config = tmp_path / "config"
    assert main(["--dir", str(config), "--nodes", "kubelet-1=172.28.0.11", "--etcd-host", "etcd",
                 "--admin-kubeconfig", str(tmp_path / "out" / "kubeconfig")]) == 0

    server = x509.load_pem_x509_certificate((config / "pki" / "etcd" / "server.crt").read_bytes())
    server.verify_directly_issued_by(x509.load_pem_x509_certificate((config / "pki" / "etcd" / "ca.crt").read_bytes()))
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {"etcd", "localhost"} <= set(sans.get_values_for_type(x509.DNSName))
    for key in config.rglob("*.key"):
        assert key.stat().st_mode & 0o777 == 0o600, key
    assert (config / "pki" / "apiserver-etcd-client.key").exists()
    assert (tmp_path / "out" / "kubeconfig").stat().st_mode & 0o777 == 0o600
