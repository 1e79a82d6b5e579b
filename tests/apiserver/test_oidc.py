"""Service account issuer discovery: the documents, a token verified from the JWKS alone, RBAC."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from fastapi import FastAPI

from apiserver.authn.authenticator import UserInfo
from apiserver.authn.serviceaccount import ISSUER, TokenSigner, load_or_generate_key
from apiserver.authz.attributes import Attributes, Decision
from apiserver.authz.bootstrap import bootstrap_policy
from apiserver.authz.rbac import RBACAuthorizer
from apiserver.endpoints.oidc import (
    JWKS_PATH,
    OPENID_CONFIGURATION_PATH,
    jwks,
    oidc_router,
    openid_configuration,
)

RSA_SIGNER = TokenSigner(load_or_generate_key(None))


def test_the_discovery_document_names_the_issuer_and_its_jwks() -> None:
    body, media_type = openid_configuration(RSA_SIGNER)
    assert media_type == "application/json"
    assert json.loads(body) == {
        "issuer": ISSUER, "jwks_uri": f"{ISSUER}/openid/v1/jwks", "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]}


def test_a_custom_issuer_and_jwks_uri() -> None:
    signer = TokenSigner(RSA_SIGNER.key, issuer="https://oidc.example/cluster-1/")
    assert json.loads(openid_configuration(signer)[0])["jwks_uri"] == "https://oidc.example/cluster-1/openid/v1/jwks"
    body, _ = openid_configuration(signer, jwks_uri="https://cdn.example/keys.json")
    assert json.loads(body)["jwks_uri"] == "https://cdn.example/keys.json"


def verify_from_jwks(signer: TokenSigner, token: str, *, audience: str) -> dict[str, Any]:
    """What a relying party does: pick the JWK the token's kid names, build the key, verify."""
    body, media_type = jwks(signer)
    assert media_type == "application/jwk-set+json"
    keys = {k["kid"]: k for k in json.loads(body)["keys"]}
    jwk = keys[jwt.get_unverified_header(token)["kid"]]
    key = jwt.PyJWK(jwk)
    claims: dict[str, Any] = jwt.decode(token, key.key, algorithms=[jwk["alg"]], audience=audience, issuer=ISSUER)
    return claims


@pytest.mark.parametrize("signer", [RSA_SIGNER, TokenSigner(ec.generate_private_key(ec.SECP256R1()))],
                         ids=["rsa", "ec"])
def test_a_token_verifies_with_the_published_key_alone(signer: TokenSigner) -> None:
    token, _ = signer.issue(namespace="ns", name="app", uid="u", audiences=["vault"], expiration_seconds=600)
    assert verify_from_jwks(signer, token, audience="vault")["sub"] == "system:serviceaccount:ns:app"
    with pytest.raises(jwt.InvalidAudienceError):
        verify_from_jwks(signer, token, audience="someone-else")


def test_the_jwk_has_upstreams_fields() -> None:
    (rsa_key,) = json.loads(jwks(RSA_SIGNER)[0])["keys"]
    assert {k: rsa_key[k] for k in ("kty", "alg", "use", "kid", "e")} == {
        "kty": "RSA", "alg": "RS256", "use": "sig", "kid": RSA_SIGNER.key_id, "e": "AQAB"}
    assert rsa_key["n"]
    (ec_key,) = json.loads(jwks(TokenSigner(ec.generate_private_key(ec.SECP384R1())))[0])["keys"]
    assert (ec_key["kty"], ec_key["crv"], ec_key["alg"]) == ("EC", "P-384", "ES384") and ec_key["x"] and ec_key["y"]


async def test_the_router_serves_both_documents_with_their_media_types() -> None:
    app = FastAPI()
    app.include_router(oidc_router(RSA_SIGNER))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://apiserver") as c:
        config = await c.get(OPENID_CONFIGURATION_PATH)
        keys = await c.get(JWKS_PATH)
    assert config.headers["content-type"] == "application/json"
    assert keys.headers["content-type"] == "application/jwk-set+json"
    assert config.headers["cache-control"] == keys.headers["cache-control"] == "public, max-age=3600"
    assert config.json()["issuer"] == ISSUER
    assert keys.json()["keys"][0]["kid"] == RSA_SIGNER.key_id


class PolicyLister:
    """The bootstrap policy's objects of one resource, as the RBAC authorizer reads them."""

    def __init__(self, plural: str) -> None:
        self.objects = [obj for p, obj in bootstrap_policy() if p == plural]

    def get(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        return next((o for o in self.objects if o["metadata"]["name"] == name
                     and o["metadata"].get("namespace") == namespace), None)

    def iter(self, namespace: str | None = None) -> Iterator[dict[str, Any]]:
        return iter([o for o in self.objects if namespace is None or o["metadata"].get("namespace") == namespace])


def authorize(user: UserInfo, path: str, verb: str = "get") -> Decision:
    rbac = RBACAuthorizer(roles=PolicyLister("roles"), cluster_roles=PolicyLister("clusterroles"),
                          role_bindings=PolicyLister("rolebindings"),
                          cluster_role_bindings=PolicyLister("clusterrolebindings"))
    return rbac.authorize(Attributes(user=user, verb=verb, resource_request=False, path=path))[0]


@pytest.mark.parametrize("path", [OPENID_CONFIGURATION_PATH, JWKS_PATH])
def test_service_accounts_may_read_the_discovery_documents(path: str) -> None:
    sa = UserInfo("system:serviceaccount:ns:app", "u", ("system:serviceaccounts", "system:serviceaccounts:ns",
                                                         "system:authenticated"))
    assert authorize(sa, path) is Decision.ALLOW
    assert authorize(sa, path, verb="post") is Decision.NO_OPINION
    assert authorize(UserInfo("alice", groups=("system:authenticated",)), path) is Decision.NO_OPINION
