"""Issuing a certificate for an approved request with the cluster CA.

Mirrors pkg/controller/certificates/authority (PermissiveSigningPolicy): the certificate
carries the request's subject, public key and SANs, the key usages and extended key usages
its `spec.usages` name, a random serial, a start backdated five minutes (for clocks running
behind) and an end at `min(now + duration, CA expiry)`, where the duration is the
request's `expirationSeconds` when set and shorter than `--cluster-signing-duration`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

__all__ = ["CertificateAuthority", "BACKDATE", "signing_duration"]

BACKDATE = dt.timedelta(minutes=5)

_EXTENDED = {"server auth": ExtendedKeyUsageOID.SERVER_AUTH, "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
             "code signing": ExtendedKeyUsageOID.CODE_SIGNING, "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
             "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION, "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
             "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING, "any": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE}
_KEY_USAGE_FLAGS = {"signing": "digital_signature", "digital signature": "digital_signature",
                    "content commitment": "content_commitment", "key encipherment": "key_encipherment",
                    "key agreement": "key_agreement", "data encipherment": "data_encipherment",
                    "cert sign": "key_cert_sign", "crl sign": "crl_sign"}


def signing_duration(cluster_duration: dt.timedelta, expiration_seconds: int | None) -> dt.timedelta:
    """The lifetime to sign for: the request's expirationSeconds when shorter than the cluster's."""
    if expiration_seconds is None:
        return cluster_duration
    return min(cluster_duration, dt.timedelta(seconds=expiration_seconds))


@dataclass(frozen=True)
class CertificateAuthority:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey

    @classmethod
    def load(cls, cert_pem: bytes, key_pem: bytes) -> CertificateAuthority:
        """The CA from PEM files' contents; ValueError when they do not parse or belong together."""
        cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey):
            raise ValueError("the signing key is not an ECDSA, RSA or Ed25519 key")
        if cert.public_key() != key.public_key():
            raise ValueError("the signing certificate and key do not belong together")
        return cls(cert, key)

    def sign(self, req: x509.CertificateSigningRequest, *, usages: list[str], duration: dt.timedelta,
             now: dt.datetime) -> bytes:
        """A PEM certificate for `req`, valid from now - BACKDATE for `duration` (not past the CA's end)."""
        flags = dict.fromkeys(("digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
                               "key_agreement", "key_cert_sign", "crl_sign"), False)
        for usage in usages:
            if usage in _KEY_USAGE_FLAGS:
                flags[_KEY_USAGE_FLAGS[usage]] = True
        extended = list(dict.fromkeys(_EXTENDED[u] for u in usages if u in _EXTENDED))
        not_after = min(now + duration, self.certificate.not_valid_after_utc)
        builder = (x509.CertificateBuilder()
                   .subject_name(req.subject).issuer_name(self.certificate.subject)
                   .public_key(req.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - BACKDATE).not_valid_after(not_after)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(**flags, encipher_only=False, decipher_only=False), critical=True))
        if extended:
            builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
        try:
            sans = req.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            builder = builder.add_extension(sans, critical=False)
        except x509.ExtensionNotFound:
            pass
        try:
            ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
            builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                                            critical=False)
        except x509.ExtensionNotFound:
            pass
        algorithm = None if isinstance(self.key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
        return builder.sign(self.key, algorithm).public_bytes(serialization.Encoding.PEM)
