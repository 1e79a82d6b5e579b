"""ServiceAccount tokens: what a token says, and every way a token must fail to authenticate."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from apiserver.authn.serviceaccount import ISSUER, BoundPod, ObjectRef, TokenSigner, load_or_generate_key
from apiserver.authn.serviceaccount_validator import ServiceAccountAuthenticator

NOW = 1_700_000_000
KEY = load_or_generate_key(None)  # RSA 2048 takes a moment: one per module
ACCOUNT = {"metadata": {"name": "reader", "namespace": "ns", "uid": "uid-1"}}


def issue(signer: TokenSigner, **kw: Any) -> str:
    args: dict[str, Any] = {"namespace": "ns", "name": "reader", "uid": "uid-1", "audiences": [],
                            "expiration_seconds": 3600, "now": NOW, **kw}
    return signer.issue(**args)[0]


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_a_token_carries_upstreams_claims_and_kid() -> None:
    signer = TokenSigner(KEY)
    token, exp = signer.issue(namespace="ns", name="reader", uid="uid-1", audiences=["vault"],
                              expiration_seconds=600, now=NOW, pod=BoundPod("web-0", "pod-uid"))
    header = jwt.get_unverified_header(token)
    der = KEY.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert header == {"alg": "RS256",
                      "kid": base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()}
    claims = jwt.decode(token, options={"verify_signature": False})
    assert exp == NOW + 600
    assert str(uuid.UUID(claims.pop("jti"))) != ""
    assert claims == {"iss": ISSUER, "sub": "system:serviceaccount:ns:reader", "aud": ["vault"],
                      "iat": NOW, "nbf": NOW, "exp": NOW + 600,
                      "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "reader", "uid": "uid-1"},
                                        "pod": {"name": "web-0", "uid": "pod-uid"}}}


def test_a_token_without_audiences_gets_the_api_servers_own() -> None:
    signer = TokenSigner(KEY, issuer="https://issuer.example", audiences=["api", "other"])
    claims = jwt.decode(issue(signer), options={"verify_signature": False})
    assert claims["iss"] == "https://issuer.example" and claims["aud"] == ["api", "other"]


def test_an_issued_token_verifies_and_authenticates() -> None:
    signer = TokenSigner(KEY)
    token = issue(signer, now=None)
    assert signer.verify(token) is not None
    user = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT).authenticate(bearer(token))
    assert user is not None
    assert (user.name, user.uid) == ("system:serviceaccount:ns:reader", "uid-1")
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")


def tampered(token: str) -> str:
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["kubernetes.io"]["namespace"] = "kube-system"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


def unsigned(token: str) -> str:
    body = token.split(".")[1]
    head = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    return f"{head}.{body}."


@pytest.mark.parametrize("case", ["tampered", "unsigned", "other key", "expired", "not yet valid",
                                  "wrong audience", "wrong issuer", "garbage"])
def test_a_bad_token_does_not_verify(case: str) -> None:
    signer = TokenSigner(KEY)
    token, now = issue(signer), float(NOW + 10)
    if case == "tampered":
        token = tampered(token)
    elif case == "unsigned":
        token = unsigned(token)
    elif case == "other key":
        token = issue(TokenSigner(ec.generate_private_key(ec.SECP256R1())))
    elif case == "expired":
        now = NOW + 3600 + 61  # past exp and the 60 s leeway
    elif case == "not yet valid":
        now = NOW - 61
    elif case == "wrong audience":
        token = issue(signer, audiences=["https://vault.example"])
    elif case == "wrong issuer":
        token = issue(TokenSigner(KEY, issuer="https://elsewhere.example", audiences=[ISSUER]))
    else:
        token = "a.b.c"
    assert signer.verify(token, now=now) is None


def test_the_leeway_tolerates_a_minute_of_clock_skew() -> None:
    signer = TokenSigner(KEY)
    token = issue(signer)
    assert signer.verify(token, now=NOW - 30) is not None
    assert signer.verify(token, now=NOW + 3600 + 30) is not None


def test_a_recreated_account_or_a_deleted_pod_ends_the_token() -> None:
    signer = TokenSigner(KEY)
    token = issue(signer, now=None, pod=BoundPod("web-0", "pod-uid"))
    recreated = {"metadata": {"uid": "uid-2"}}
    assert ServiceAccountAuthenticator(signer, lambda ns, name: recreated).authenticate(bearer(token)) is None
    assert ServiceAccountAuthenticator(signer, lambda ns, name: None).authenticate(bearer(token)) is None
    pods: dict[str, Any] = {"web-0": {"metadata": {"uid": "pod-uid"}}}
    authn = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT, pod_lookup=lambda ns, name: pods.get(name))
    user = authn.authenticate(bearer(token))
    jti = jwt.decode(token, options={"verify_signature": False})["jti"]
    assert user is not None and user.extra == {"authentication.kubernetes.io/pod-name": ("web-0",),
                                               "authentication.kubernetes.io/pod-uid": ("pod-uid",),
                                               "authentication.kubernetes.io/credential-id": (f"JTI={jti}",)}
    unbound = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT).authenticate(
        bearer(issue(signer, now=None)))
    assert unbound is not None and set(unbound.extra) == {"authentication.kubernetes.io/credential-id"}
    del pods["web-0"]
    assert authn.authenticate(bearer(token)) is None


def meta(uid: str, deleted: str | None = None) -> dict[str, Any]:
    return {"metadata": {"uid": uid, **({"deletionTimestamp": deleted} if deleted else {})}}


def test_a_replaced_pod_or_one_deleted_beyond_the_leeway_ends_the_token() -> None:
    signer = TokenSigner(KEY)
    token = issue(signer, now=None, pod=BoundPod("web-0", "pod-uid"), node=ObjectRef("node-1", "node-uid"))
    pods: dict[str, Any] = {"web-0": meta("pod-uid")}
    authn = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT, pod_lookup=lambda ns, name: pods.get(name),
                                        node_lookup=lambda name: None)
    user = authn.authenticate(bearer(token))
    # The pod's node is information only: a pod-bound token outlives its node object.
    assert user is not None and user.extra["authentication.kubernetes.io/node-name"] == ("node-1",)
    assert user.extra["authentication.kubernetes.io/node-uid"] == ("node-uid",)
    pods["web-0"] = meta("pod-uid", deleted="2000-01-01T00:00:00Z")  # graceful deletion long over
    assert authn.authenticate(bearer(token)) is None
    pods["web-0"] = meta("pod-uid", deleted="2999-01-01T00:00:00Z")  # still terminating
    assert authn.authenticate(bearer(token)) is not None
    pods["web-0"] = meta("other-uid")  # same name, another pod
    assert authn.authenticate(bearer(token)) is None


def test_a_secret_or_node_bound_token_lives_as_long_as_its_object() -> None:
    signer = TokenSigner(KEY)
    objects: dict[str, Any] = {"s": meta("secret-uid"), "n": meta("node-uid")}
    authn = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT,
                                        secret_lookup=lambda ns, name: objects.get(name),
                                        node_lookup=lambda name: objects.get(name))
    by_secret = issue(signer, now=None, secret=ObjectRef("s", "secret-uid"))
    by_node = issue(signer, now=None, node=ObjectRef("n", "node-uid"))
    assert authn.authenticate(bearer(by_secret)) is not None
    node_user = authn.authenticate(bearer(by_node))
    assert node_user is not None and node_user.extra["authentication.kubernetes.io/node-name"] == ("n",)
    objects.clear()
    assert authn.authenticate(bearer(by_secret)) is None
    assert authn.authenticate(bearer(by_node)) is None
    with pytest.raises(ValueError, match="only be bound to one object type"):
        issue(signer, secret=ObjectRef("s", "u"), pod=BoundPod("p", "u"))


def test_the_authenticator_checks_its_own_audiences() -> None:
    signer = TokenSigner(KEY)
    token = issue(signer, now=None, audiences=["https://api.example"])
    assert ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT).authenticate(bearer(token)) is None
    authn = ServiceAccountAuthenticator(signer, lambda ns, name: ACCOUNT, audiences=["https://api.example"])
    assert authn.authenticate(bearer(token)) is not None


def test_other_credentials_are_not_ours() -> None:
    authn = ServiceAccountAuthenticator(TokenSigner(KEY), lambda ns, name: ACCOUNT)
    assert authn.authenticate({}) is None
    assert authn.authenticate({"authorization": "Basic dXNlcjpwYXNz"}) is None
    assert authn.authenticate(bearer("opaque-static-token")) is None


def test_an_ec_key_signs_es256(tmp_path: Path) -> None:
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "sa.key").write_bytes(pem)
    signer = TokenSigner(load_or_generate_key(str(tmp_path / "sa.key")))
    token = issue(signer, now=None)
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    assert signer.verify(token) is not None


def test_another_kind_of_key_is_refused(tmp_path: Path) -> None:
    pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "sa.key").write_bytes(pem)
    with pytest.raises(ValueError, match="RSA or EC"):
        load_or_generate_key(str(tmp_path / "sa.key"))
