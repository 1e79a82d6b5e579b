"""The cluster's certificate authority and the API server's serving certificate.

Every client (kubectl, the components, curl) trusts the API server because its serving
certificate is signed by a private cluster CA whose certificate is embedded in each
kubeconfig. This module creates that CA and certificate the first time and reuses them on
every later `picokube up`, so kubeconfigs handed out earlier keep working.

Guarantees:
- `ensure_cluster_pki(dir)` leaves `ca.crt`, `ca.key`, `apiserver.crt`, `apiserver.key` in
  `dir`. Files that exist, parse, belong together, are not about to expire and (for the
  serving certificate) carry every SAN in `APISERVER_DNS_NAMES`/`APISERVER_IPS` and the
  `ips` and `dns_names` asked for are kept; anything else is regenerated. A new CA always brings a new
  serving certificate. The `kubernetes` Service's cluster IP belongs in `ips`: a client in
  a pod dials it (KUBERNETES_SERVICE_HOST) and checks the certificate against it.
- Keys are ECDSA P-256, written PKCS#8 PEM with mode 0600. The CA is valid 10 years, leaf
  certificates 1 year.
- `issue_client_certificate` signs a client certificate the way kube-apiserver's x509
  authenticator reads it: CN is the user name, each O is a group.

Mirrors what `kubeadm init phase certs` does for `ca` and `apiserver`, in miniature.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from picokube._files import make_private_dir, write_file_atomic

__all__ = [
    "APISERVER_DNS_NAMES",
    "APISERVER_IPS",
    "ClusterPki",
    "ensure_ca",
    "ensure_cluster_pki",
    "ensure_leaf",
    "issue_client_certificate",
    "issue_serving_certificate",
]

logger = logging.getLogger(__name__)

APISERVER_DNS_NAMES: tuple[str, ...] = (
    "localhost",
    "apiserver",  # the compose service name
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
APISERVER_IPS: tuple[str, ...] = ("127.0.0.1", "::1")

CA_VALIDITY = dt.timedelta(days=3650)
LEAF_VALIDITY = dt.timedelta(days=365)
# A certificate this close to expiry is replaced rather than reused.
RENEW_BEFORE = dt.timedelta(days=30)
# Tolerates clocks of other machines (compose containers) running slightly behind.
BACKDATE = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class ClusterPki:
    """Where the cluster's PKI files live."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def apiserver_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def apiserver_key(self) -> Path:
        return self.directory / "apiserver.key"

    def ca_pem(self) -> bytes:
        """The CA certificate in PEM, as embedded in kubeconfigs."""
        return self.ca_cert.read_bytes()


def ensure_cluster_pki(directory: Path, *, ips: Sequence[str] = (), dns_names: Sequence[str] = ()) -> ClusterPki:
    """Create or reuse the CA and the API server serving certificate in `directory`.

    The serving certificate names `APISERVER_IPS` and `ips` too (the `kubernetes` Service's
    cluster IP, which in-cluster clients dial), and `APISERVER_DNS_NAMES` and `dns_names`
    (a load balancer's name, which every kubeconfig then names).

    Idempotent; not safe to run concurrently for the same directory (callers hold the
    data dir's lock).
    """
    pki, ca = _ensure_ca(directory, "picokube-ca")
    wanted_ips = tuple(dict.fromkeys((*APISERVER_IPS, *ips)))
    wanted_dns = tuple(dict.fromkeys((*APISERVER_DNS_NAMES, *dns_names)))
    if not _serving_cert_is_valid(pki, ca[0], wanted_ips, wanted_dns):
        logger.info("Generating API server serving certificate in %s", directory)
        _write_pair(pki.apiserver_cert, pki.apiserver_key, _create_serving_cert(ca, wanted_ips, wanted_dns))
    return pki


def ensure_ca(directory: Path, *, common_name: str) -> ClusterPki:
    """Create or reuse a CA (`ca.crt`, `ca.key`) in `directory`, which is made private (0700).

    A CA that parses, matches its key and is not near expiry is kept. Same concurrency rule
    as `ensure_cluster_pki`.
    """
    return _ensure_ca(directory, common_name)[0]


def _ensure_ca(directory: Path, common_name: str) -> tuple[ClusterPki, _Pair]:
    pki = ClusterPki(directory)
    make_private_dir(directory)
    ca = _load_valid_ca(pki)
    if ca is None:
        logger.info("Generating CA %s in %s", common_name, directory)
        ca = _create_ca(common_name)
        _write_pair(pki.ca_cert, pki.ca_key, ca)
    return pki, ca


def issue_client_certificate(pki: ClusterPki, *, user: str, groups: Sequence[str] = (),
                             validity: dt.timedelta = LEAF_VALIDITY) -> tuple[bytes, bytes]:
    """Sign a client certificate for `user` in `groups`; return (certificate PEM, key PEM).

    Raises OSError/ValueError when the CA files are missing or unreadable.
    """
    ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    ca_key = _load_ec_key(pki.ca_key)
    key = ec.generate_private_key(ec.SECP256R1())
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject = x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, user)])
    cert = (
        _leaf_builder(subject, key, ca_cert, validity)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


_Pair = tuple[x509.Certificate, ec.EllipticCurvePrivateKey]


def _create_ca(common_name: str) -> _Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _create_serving_cert(ca: _Pair, ips: Sequence[str], dns_names: Sequence[str]) -> _Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (
        _leaf_builder(subject, key, ca[0], LEAF_VALIDITY)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca[1], hashes.SHA256())
    )
    return cert, key


def _leaf_builder(subject: x509.Name, key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate,
                  validity: dt.timedelta) -> x509.CertificateBuilder:
    now = _now()
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
        crl_sign=cert_sign, encipher_only=False, decipher_only=False,
    )


def _load_valid_ca(pki: ClusterPki) -> _Pair | None:
    """The existing CA when both files parse, match and are not near expiry; else None."""
    try:
        cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        key = _load_ec_key(pki.ca_key)
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    except (OSError, ValueError, TypeError, x509.ExtensionNotFound):
        return None
    if not constraints.ca or not _same_key(cert, key) or not _fresh(cert):
        logger.warning("Existing CA in %s is unusable, replacing it", pki.directory)
        return None
    return cert, key


def _serving_cert_is_valid(pki: ClusterPki, ca_cert: x509.Certificate, ips: Sequence[str],
                           dns_names: Sequence[str]) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(pki.apiserver_cert.read_bytes())
        key = _load_ec_key(pki.apiserver_key)
        cert.verify_directly_issued_by(ca_cert)
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    have_dns = set(sans.get_values_for_type(x509.DNSName))
    have_ips = {ipaddress.ip_address(str(ip)) for ip in sans.get_values_for_type(x509.IPAddress)}
    return (_same_key(cert, key) and _fresh(cert)
            and set(dns_names) <= have_dns and {ipaddress.ip_address(ip) for ip in ips} <= have_ips)


def _load_ec_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise TypeError(f"{path} does not hold an ECDSA key")
    return key


def _same_key(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> bool:
    return cert.public_key() == key.public_key()


def _fresh(cert: x509.Certificate) -> bool:
    now = _now()
    return cert.not_valid_before_utc <= now + BACKDATE and cert.not_valid_after_utc > now + RENEW_BEFORE


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write_pair(cert_path: Path, key_path: Path, pair: _Pair) -> None:
    write_file_atomic(key_path, _key_pem(pair[1]), mode=0o600)
    write_file_atomic(cert_path, pair[0].public_bytes(serialization.Encoding.PEM), mode=0o644)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def issue_serving_certificate(pki: ClusterPki, *, name: str, ips: Sequence[str] = ("127.0.0.1",),
                              dns_names: Sequence[str] = (), validity: dt.timedelta = LEAF_VALIDITY,
                              client_auth: bool = False) -> tuple[bytes, bytes]:
    """Sign a serving certificate (a kubelet's, say) for `ips` and `dns_names`; return (cert PEM, key PEM).

    With `client_auth` it is good as a client certificate too, as etcd's server and peer
    certificates must be (members dial each other, and etcd dials itself for its gateway).
    """
    usages = [ExtendedKeyUsageOID.SERVER_AUTH, *([ExtendedKeyUsageOID.CLIENT_AUTH] if client_auth else [])]
    ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    ca_key = _load_ec_key(pki.ca_key)
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (
        _leaf_builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]), key, ca_cert, validity)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def ensure_leaf(pki: ClusterPki, stem: str, issue: Callable[[], tuple[bytes, bytes]], *,
                directory: Path | None = None) -> tuple[Path, Path]:
    """`<directory>/<stem>.crt` and `.key`, issued by `issue()` unless a fresh pair signed by
    `pki`'s CA exists; `directory` defaults to the CA's own (kubeadm keeps the API server's
    etcd client certificate beside the cluster CA, signed by the etcd CA)."""
    directory = directory or pki.directory
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    if cert_path.exists() and key_path.exists():
        try:
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
            if _fresh(cert) and cert.issuer == ca_cert.subject and _same_key(cert, _load_ec_key(key_path)):
                return cert_path, key_path
        except (OSError, ValueError):
            pass
    cert_pem, key_pem = issue()
    write_file_atomic(key_path, key_pem, mode=0o600)
    write_file_atomic(cert_path, cert_pem, mode=0o644)
    return cert_path, key_path
