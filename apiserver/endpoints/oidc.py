"""Service account issuer discovery: the OIDC documents that let others verify our tokens.

Mirrors kube-apiserver's pkg/serviceaccount/openidmetadata.go and its routes. A relying
party (a cloud's workload identity, Vault) reads
- `/.well-known/openid-configuration` (`application/json`): the issuer, `jwks_uri`
  (`<issuer>/openid/v1/jwks` unless given), `response_types_supported` ["id_token"],
  `subject_types_supported` ["public"] and the signing algorithms of our key(s);
- `/openid/v1/jwks` (`application/jwk-set+json`): the public keys as a JWK Set, each with
  `kty`, `alg`, `use` "sig", `kid` (the same kid as in the tokens' header) and the key's
  numbers (`n`, `e` for RSA; `crv`, `x`, `y` for EC);
then verifies a token with the key whose kid its header names. Both answer with
`Cache-Control: public, max-age=3600`, as upstream, since keys change only on restart.

The bodies are pure functions of the signer; `oidc_router` serves them. Access is the
authorizer's business like any non-resource path: the bootstrap policy lets
`system:serviceaccounts` get them (`system:service-account-issuer-discovery`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import APIRouter, Response
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from apiserver.authn.serviceaccount import TokenSigner

__all__ = ["JWKS_MEDIA_TYPE", "JWKS_PATH", "OPENID_CONFIGURATION_PATH", "jwks", "oidc_router",
           "openid_configuration", "public_jwk"]

OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
JWKS_MEDIA_TYPE = "application/jwk-set+json"
_CACHE_CONTROL = "public, max-age=3600"


def public_jwk(signer: TokenSigner) -> dict[str, Any]:
    """The signer's public key as a JWK: kty, the key's numbers, and use, kid, alg."""
    if isinstance(signer.public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(signer.public, as_dict=True)
    else:
        jwk = ECAlgorithm.to_jwk(signer.public, as_dict=True)
    return {**jwk, "use": "sig", "kid": signer.key_id, "alg": signer.algorithm}


def jwks(signer: TokenSigner) -> tuple[bytes, str]:
    """The body and media type of /openid/v1/jwks."""
    return json.dumps({"keys": [public_jwk(signer)]}).encode(), JWKS_MEDIA_TYPE


def openid_configuration(signer: TokenSigner, *, jwks_uri: str | None = None) -> tuple[bytes, str]:
    """The body and media type of /.well-known/openid-configuration.

    `jwks_uri` defaults to the issuer's URL with `/openid/v1/jwks` appended (upstream's
    default when `--service-account-jwks-uri` is not given).
    """
    document = {
        "issuer": signer.issuer,
        "jwks_uri": jwks_uri or signer.issuer.rstrip("/") + JWKS_PATH,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [signer.algorithm],
    }
    return json.dumps(document).encode(), "application/json"


def _static(body: bytes, media_type: str) -> Callable[[], Awaitable[Response]]:
    async def serve() -> Response:
        return Response(body, media_type=media_type, headers={"Cache-Control": _CACHE_CONTROL})
    return serve


def oidc_router(signer: TokenSigner, *, jwks_uri: str | None = None) -> APIRouter:
    """GET routes for both documents, computed once (the key does not change while serving)."""
    router = APIRouter()
    router.add_api_route(OPENID_CONFIGURATION_PATH, _static(*openid_configuration(signer, jwks_uri=jwks_uri)),
                         methods=["GET"], include_in_schema=False)
    router.add_api_route(JWKS_PATH, _static(*jwks(signer)), methods=["GET"], include_in_schema=False)
    return router
