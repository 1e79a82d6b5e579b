"""ServiceAccount tokens: signed, expiring JWTs issued by TokenRequest and verified per request.

Mirrors pkg/serviceaccount (claims.go, jwt.go). A token is a JWS signed with the API server's
key (RS256 for an RSA key, ES256/384/512 for an EC one), with a `kid` header derived from the
public key as upstream derives it, and the claims:
- `iss`: the issuer (configurable; default `https://kubernetes.default.svc.cluster.local`);
- `sub`: `system:serviceaccount:<namespace>:<name>`; `aud`: the audiences asked for, else
  the API server's own; `iat`, `nbf`, `exp`;
- `kubernetes.io`: {namespace, serviceaccount {name, uid}, and pod {name, uid} when bound}.

A token authenticates only while: its signature verifies with the API server's key, it is
unexpired (60 s leeway, upstream's), it names our issuer and one of the API server's
audiences, and the ServiceAccount (and the pod, for a bound token) still exists with the
uid in the token, so a deleted and recreated account inherits no old tokens. Users get the
groups `system:serviceaccounts`, `system:serviceaccounts:<namespace>` and
`system:authenticated`, and a pod-bound token's user the extra
`authentication.kubernetes.io/pod-name` and `.../pod-uid`, as upstream. Signing and
verifying go through PyJWT; a bad token is None, never an exception, so the pipeline
answers 401.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from apiserver.authn.authenticator import UserInfo

__all__ = ["ISSUER", "BoundPod", "ServiceAccountAuthenticator", "SigningKey", "TokenSigner", "key_id",
           "load_or_generate_key"]

ISSUER = "https://kubernetes.default.svc.cluster.local"
LEEWAY_SECONDS = 60
SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
Lookup = Callable[[str, str], "dict[str, Any] | None"]

_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_REQUIRED = ["iss", "sub", "aud", "exp", "iat", "nbf"]


@dataclass(frozen=True)
class BoundPod:
    """The pod a token is bound to (TokenRequest's boundObjectRef of kind Pod)."""

    name: str
    uid: str


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
              now: float | None = None, pod: BoundPod | None = None) -> tuple[str, int]:
        """A token and its expiry (unix seconds); empty `audiences` means the API server's own."""
        iat = int(now if now is not None else time.time())
        exp = iat + expiration_seconds
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        if pod is not None:
            private["pod"] = {"name": pod.name, "uid": pod.uid}
        claims = {"iss": self.issuer, "sub": f"system:serviceaccount:{namespace}:{name}",
                  "aud": list(audiences) or list(self.audiences), "iat": iat, "nbf": iat, "exp": exp,
                  "kubernetes.io": private}
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


class ServiceAccountAuthenticator:
    """Authenticates `Authorization: Bearer <token>` requests carrying our ServiceAccount tokens.

    `lookup(namespace, name)` returns the ServiceAccount object or None; `pod_lookup`, when
    given, does the same for the pod a bound token names. Both must not block.
    """

    def __init__(self, signer: TokenSigner, lookup: Lookup, *, audiences: Sequence[str] | None = None,
                 pod_lookup: Lookup | None = None) -> None:
        self.signer = signer
        self.lookup = lookup
        self.audiences = tuple(audiences) if audiences is not None else signer.audiences
        self.pod_lookup = pod_lookup

    def authenticate(self, headers: Mapping[str, str]) -> UserInfo | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or token.count(".") != 2:
            return None
        claims = self.signer.verify(token.strip(), audiences=self.audiences)
        if claims is None:
            return None
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            return None
        ns, sa, pod = private.get("namespace"), private.get("serviceaccount") or {}, private.get("pod")
        name, uid = sa.get("name"), sa.get("uid")
        if not (isinstance(ns, str) and isinstance(name, str) and isinstance(uid, str)) \
                or claims.get("sub") != f"system:serviceaccount:{ns}:{name}":
            return None
        if not _same_uid(self.lookup(ns, name), uid):
            return None
        if isinstance(pod, dict) and self.pod_lookup is not None \
                and not _same_uid(self.pod_lookup(ns, str(pod.get("name"))), pod.get("uid")):
            return None
        return UserInfo(f"system:serviceaccount:{ns}:{name}", uid,
                        ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"),
                        _pod_extra(pod))


def _pod_extra(pod: object) -> dict[str, tuple[str, ...]]:
    """Upstream's user extra for a token bound to a pod: the pod's name and uid."""
    if not isinstance(pod, dict) or not isinstance(pod.get("name"), str) or not isinstance(pod.get("uid"), str):
        return {}
    return {"authentication.kubernetes.io/pod-name": (pod["name"],),
            "authentication.kubernetes.io/pod-uid": (pod["uid"],)}


def _same_uid(obj: dict[str, Any] | None, uid: object) -> bool:
    return obj is not None and (obj.get("metadata") or {}).get("uid") == uid
