"""The compose init step: etcd's certificates name its service, every secret is private."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509

from kube.bootstraptoken import parse_token
from kube.csr import ca_cert_hash
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


def test_ha_init_names_the_balancer_and_each_etcd_member_and_writes_join_files(tmp_path: Path) -> None:
    config, join = tmp_path / "config", tmp_path / "join"
    argv = ["--dir", str(config), "--server", "https://lb:6443", "--apiserver-host", "lb",
            "--nodes", "kubelet-1=172.28.0.11", "--etcd-host", "etcd",
            *[arg for m in ("etcd", "etcd-2", "etcd-3") for arg in ("--etcd-member", m)],
            "--join-dir", str(join), "--admin-kubeconfig", str(tmp_path / "out" / "kubeconfig")]
    assert main(argv) == 0

    def dns_names(path: Path) -> set[str]:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        return set(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                   .get_values_for_type(x509.DNSName))

    assert {"lb", "apiserver", "kubernetes.default.svc"} <= dns_names(config / "pki" / "apiserver.crt")
    for member in ("etcd", "etcd-2", "etcd-3"):
        for stem in ("server", "peer"):
            assert member in dns_names(config / "pki" / "etcd" / member / f"{stem}.crt")
    assert "server: https://lb:6443" in (config / "controller-manager.kubeconfig").read_text()

    token = (join / "token").read_text().strip()
    assert parse_token(token) is not None
    assert (join / "ca-cert-hash").read_text().strip() == ca_cert_hash((config / "pki" / "ca.crt").read_bytes())
    assert main(argv) == 0  # a second `up` keeps the token and the certificates
    assert (join / "token").read_text().strip() == token
    assert not list(join.glob("*.key")) and not (join / "kubeconfig").exists()  # nothing secret but the token
