"""ServiceAccount tokens: signed, expiring JWTs issued by TokenRequest and verified per request.

Mirrors pkg/serviceaccount (claims.go, jwt.go). A token is a JWS signed with the API server's
key (RS256 for an RSA key, ES256/384/512 for an EC one), with a `kid` header derived from the
public key as upstream derives it, and the claims:
- `iss`: the issuer (configurable; default `https://kubernetes.default.svc.cluster.local`);
- `sub`: `system:serviceaccount:<namespace>:<name>`; `aud`: the audiences asked for, else
  the API server's own; `iat`, `nbf`, `exp`;
- `jti`: a fresh UUID per token (the user's `authentication.kubernetes.io/credential-id`);
- `kubernetes.io`: {namespace, serviceaccount {name, uid}}, plus the object the token is
  bound to: pod {name, uid} (with node {name, uid} of the pod's node when it has one),
  secret {name, uid} or node {name, uid}; and `warnafter` for the extended-expiry tokens
  the kubelet's projected volumes get (see rest/token.py).

Signing and the signature, issuer, audience and time checks live here (`TokenSigner`);
the checks against live objects, as upstream's claims.go validator makes them, live in
`serviceaccount_validator.py`.
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

__all__ = ["ISSUER", "LEEWAY_SECONDS", "BoundPod", "ObjectRef", "SigningKey", "TokenSigner", "key_id",
           "load_or_generate_key"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEEWAY_SECONDS = 60
SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_REQUIRED = ["iss", "sub", "aud", "exp", "iat", "nbf"]


@dataclass(frozen=True)
class ObjectRef:
    """An object a token names by name and uid (a bound pod, secret or node)."""

    name: str
    uid: str


BoundPod = ObjectRef


def load_or_generate_key(path: str | None) -> SigningKey:
    """The signing key from a PEM file (RSA, or EC on P-256/384/521), else a fresh RSA 2048 key.

    A fresh key lasts as long as the process, and so do the tokens it signs. Raises
    ValueError for another kind of key.
    """
    if not path:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with open(path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    if isinstance(key, rsa.RSAPrivateKey) or (isinstance(key, ec.EllipticCurvePrivateKey)
                                              and key.curve.name in _EC_ALGORITHMS):
        return key
    raise ValueError(f"{path}: the service account signing key must be an RSA or EC (P-256/384/521) key")


def key_id(public: PublicKey) -> str:
    """Upstream's kid: base64url (unpadded) of the SHA-256 of the DER SubjectPublicKeyInfo."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _algorithm(key: SigningKey) -> str:
    return "RS256" if isinstance(key, rsa.RSAPrivateKey) else _EC_ALGORITHMS[key.curve.name]


class TokenSigner:
    """Issues and verifies the API server's ServiceAccount tokens; safe to share across requests.

    `audiences` are the API server's own (`--api-audiences`; default: the issuer): a token
    requested without audiences gets them, and the authenticator accepts only tokens for one
    of them.
    """

    def __init__(self, key: SigningKey, *, issuer: str = ISSUER, audiences: Sequence[str] = ()) -> None:
        self.key = key
        self.public: PublicKey = key.public_key()
        self.issuer = issuer
        self.audiences = tuple(audiences) or (issuer,)
        self.algorithm = _algorithm(key)
        self.key_id = key_id(self.public)

    def issue(self, *, namespace: str, name: str, uid: str, audiences: Sequence[str], expiration_seconds: int,
              now: float | None = None, pod: ObjectRef | None = None, secret: ObjectRef | None = None,
              node: ObjectRef | None = None, warn_after_seconds: int | None = None) -> tuple[str, int]:
        """A token and its expiry (unix seconds); empty `audiences` means the API server's own.

        A token is bound to at most one of `pod` and `secret`; `node` alone binds it to a
        node, and beside `pod` records the pod's node (upstream's pod node info). Raises
        ValueError for a secret together with a pod or a node.
        """
        if secret is not None and (pod is not None or node is not None):
            raise ValueError("internal error, token can only be bound to one object type")
        iat = int(now if now is not None else time.time())
        exp = iat + expiration_seconds
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        for key, ref in (("pod", pod), ("secret", secret), ("node", node)):
            if ref is not None:
                private[key] = {"name": ref.name, "uid": ref.uid} if ref.uid else {"name": ref.name}
        if warn_after_seconds:
            private["warnafter"] = iat + warn_after_seconds
        claims = {"iss": self.issuer, "sub": f"system:serviceaccount:{namespace}:{name}",
                  "aud": list(audiences) or list(self.audiences), "iat": iat, "nbf": iat, "exp": exp,
                  "jti": str(uuid.uuid4()), "kubernetes.io": private}
        token = jwt.encode(claims, self.key, algorithm=self.algorithm, headers={"kid": self.key_id, "typ": None})
        return token, exp

    def verify(self, token: str, *, audiences: Sequence[str] | None = None,
               now: float | None = None) -> dict[str, Any] | None:
        """The claims of a token of ours for one of `audiences` (default: the API server's), else None.

        Checks the signature (with our algorithm only), issuer, audience, and `nbf`/`exp`
        against `now` with a 60 s leeway. Never raises for a malformed token.
        """
        try:
            claims: dict[str, Any] = jwt.decode(
                token, self.public, algorithms=[self.algorithm], issuer=self.issuer,
                audience=list(audiences if audiences is not None else self.audiences),
                # Times are checked below against an injectable `now`.
                options={"require": _REQUIRED, "verify_exp": False, "verify_nbf": False, "verify_iat": False})
        except jwt.InvalidTokenError:
            return None
        now = now if now is not None else time.time()
        try:
            fresh = float(claims["nbf"]) - LEEWAY_SECONDS <= now < float(claims["exp"]) + LEEWAY_SECONDS
        except (TypeError, ValueError):
            return None
        return claims if fresh else None
