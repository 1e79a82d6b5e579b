"""ServiceAccount tokens: signed, expiring JWTs issued by TokenRequest and verified per request.

Mirrors pkg/serviceaccount: an ES256 JWT whose subject is
`system:serviceaccount:<namespace>:<name>`, with the account's uid in the private
`kubernetes.io` claim. A token authenticates only while it is unexpired, its signature
verifies with the API server's key, and the ServiceAccount still exists with the same uid
(a deleted and recreated account does not inherit old tokens). Users get the groups
`system:serviceaccounts`, `system:serviceaccounts:<namespace>` and `system:authenticated`.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Callable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from apiserver.authn.authenticator import UserInfo

__all__ = ["TokenSigner", "ServiceAccountAuthenticator", "ISSUER", "load_or_generate_key"]

ISSUER = "https://kubernetes.default.svc.cluster.local"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_or_generate_key(path: str | None) -> ec.EllipticCurvePrivateKey:
    """The signing key from a PEM file, or a fresh one (tokens then last as long as the process)."""
    if path:
        with open(path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{path}: the service account signing key must be an EC (P-256) key")
        return key
    return ec.generate_private_key(ec.SECP256R1())


class TokenSigner:
    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self.key = key
        self.public = key.public_key()

    def issue(self, *, namespace: str, name: str, uid: str, audiences: list[str], expiration_seconds: int,
              now: float | None = None) -> tuple[str, int]:
        """A token and its expiry (unix seconds)."""
        now = int(now if now is not None else time.time())
        exp = now + expiration_seconds
        claims = {"iss": ISSUER, "sub": f"system:serviceaccount:{namespace}:{name}", "aud": audiences,
                  "iat": now, "nbf": now, "exp": exp,
                  "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}}
        head = _b64(json.dumps({"alg": "ES256", "typ": "JWT"}).encode())
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        r, s = decode_dss_signature(self.key.sign(f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
        return f"{head}.{body}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}", exp

    def verify(self, token: str, *, now: float | None = None) -> dict[str, Any] | None:
        """The claims of a valid, unexpired token of ours, else None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            sig = _unb64(parts[2])
            if len(sig) != 64:
                return None
            der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
            self.public.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
            claims = json.loads(_unb64(parts[1]))
        except (InvalidSignature, ValueError, TypeError):
            return None
        now = now if now is not None else time.time()
        if not isinstance(claims, dict) or claims.get("iss") != ISSUER or not (claims.get("nbf", 0) - 60 <= now
                                                                               < claims.get("exp", 0)):
            return None
        return claims


class ServiceAccountAuthenticator:
    def __init__(self, signer: TokenSigner, lookup: Callable[[str, str], dict[str, Any] | None]) -> None:
        self.signer = signer
        self.lookup = lookup  # (namespace, name) -> the ServiceAccount object, or None

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token.count(".") != 2:
            return None
        claims = self.signer.verify(token.strip())
        if claims is None:
            return None
        k8s = claims.get("kubernetes.io") or {}
        ns, sa = k8s.get("namespace"), (k8s.get("serviceaccount") or {})
        account = self.lookup(str(ns), str(sa.get("name")))
        if account is None or (account.get("metadata") or {}).get("uid") != sa.get("uid"):
            return None
        return UserInfo(f"system:serviceaccount:{ns}:{sa.get('name')}", str(sa.get("uid")),
                        ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"))
