"""Client-side certificate requests: a private key and a PKCS#10 request for a user, and the
kubeadm-style pin of a CA (`sha256:<hex>` of its SubjectPublicKeyInfo).

Shared by `picokube join` (the kubelet's TLS bootstrap and rotation) and tests. Keys are
ECDSA P-256, PKCS#8 PEM, as the kubelet's certificate manager generates them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["ca_cert_hash", "new_key", "certificate_request"]


def new_key() -> bytes:
    """A fresh ECDSA P-256 private key, PKCS#8 PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def certificate_request(key_pem: bytes, *, common_name: str, organizations: Sequence[str] = ()) -> bytes:
    """A PEM CERTIFICATE REQUEST for CN=`common_name`, O=each of `organizations`, signed by the key."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("the key is not an ECDSA key")
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
                         x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


def ca_cert_hash(cert_pem: bytes) -> str:
    """`sha256:<hex>` of the certificate's DER SubjectPublicKeyInfo (kubeadm's discovery-token-ca-cert-hash).

    Raises ValueError when `cert_pem` is not a PEM certificate.
    """
    cert = x509.load_pem_x509_certificate(cert_pem)
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(spki).hexdigest()
