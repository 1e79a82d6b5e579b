"""Bootstrap token authentication against a real API server (`--enable-bootstrap-token-auth`):
a valid token is `system:bootstrap:<id>` in `system:bootstrappers`; unknown, expired, wrongly
secret or non-authentication tokens get 401; a credential-less read of kube-public's
cluster-info runs as system:anonymous and RBAC decides."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from kube.bootstraptoken import bootstrap_secret, generate_token, parse_token
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync

SECRETS = "/api/v1/namespaces/kube-system/secrets"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint,
                          extra_args=["--enable-bootstrap-token-auth"]) as harness:
        yield harness


def _client(api: ApiServerHarness, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                        headers=headers, timeout=30)


def _whoami(api: ApiServerHarness, token: str) -> httpx.Response:
    with _client(api, token) as client:
        return client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=REVIEW)


def _add_token(c: httpx.Client, *, expires_in: timedelta | None = timedelta(hours=1),
               usages: tuple[str, ...] = ("authentication", "signing")) -> str:
    token = generate_token()
    expiration = datetime.now(UTC) + expires_in if expires_in is not None else None
    assert c.post(SECRETS, json=bootstrap_secret(token, expiration=expiration, usages=usages)).status_code == 201
    return token


def test_valid_token_authenticates_as_bootstrapper(api: ApiServerHarness, c: httpx.Client) -> None:
    token = _add_token(c)
    resp = _whoami(api, token)
    assert resp.status_code == 201, resp.text
    info = resp.json()["status"]["userInfo"]
    token_id = token.split(".")[0]
    assert info["username"] == f"system:bootstrap:{token_id}"
    assert info["groups"][:2] == ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"]
    # Bound as kubeadm binds bootstrappers, it may ask for a certificate, and no more.
    c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
        "metadata": {"name": "kubeadm:kubelet-bootstrap"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-bootstrapper"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:bootstrappers"}]}
    ).raise_for_status()
    with _client(api, token) as client:
        eventually_sync(lambda: client.get("/apis/certificates.k8s.io/v1/certificatesigningrequests").status_code
                        == 200, message="bootstrapper may list CSRs")
        assert client.get("/api/v1/namespaces/kube-system/secrets").status_code == 403


@pytest.mark.parametrize("case", ["unknown", "expired", "wrong-secret", "no-authentication-usage"])
def test_refused_tokens_get_401(api: ApiServerHarness, c: httpx.Client, case: str) -> None:
    if case == "unknown":
        token = generate_token()
    elif case == "expired":
        token = _add_token(c, expires_in=timedelta(seconds=-5))
    elif case == "wrong-secret":
        token_id, _ = parse_token(_add_token(c)) or ("", "")
        token = f"{token_id}.{'0' * 16}"
    else:
        token = _add_token(c, usages=("signing",))
    resp = _whoami(api, token)
    assert resp.status_code == 401, resp.text
    assert resp.json()["reason"] == "Unauthorized"


def test_anonymous_reads_cluster_info_only_when_rbac_allows(api: ApiServerHarness, c: httpx.Client) -> None:
    c.post("/api/v1/namespaces/kube-public/configmaps",
           json={"metadata": {"name": "cluster-info"}, "data": {"kubeconfig": "x"}}).raise_for_status()
    with _client(api) as anonymous:
        refused = anonymous.get(CLUSTER_INFO)
        assert refused.status_code == 403 and 'User "system:anonymous"' in refused.json()["message"]
        assert anonymous.get("/api/v1/namespaces/kube-public/configmaps").status_code == 401
    role = {"metadata": {"name": "cluster-info-reader", "namespace": "kube-public"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cluster-info"], "verbs": ["get"]}]}
    c.post("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-public/roles", json=role).raise_for_status()
    c.post("/apis/rbac.authorization.k8s.io/v1/namespaces/kube-public/rolebindings", json={
        "metadata": {"name": "cluster-info-reader", "namespace": "kube-public"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cluster-info-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:anonymous"}]}
    ).raise_for_status()
    with _client(api) as anonymous:
        # The RBAC authorizer reads bindings from its cache, which follows the write shortly.
        def read() -> httpx.Response | None:
            resp = anonymous.get(CLUSTER_INFO)
            return resp if resp.status_code == 200 else None
        assert eventually_sync(read, message="anonymous read of cluster-info").json()["data"] == {"kubeconfig": "x"}
    with _client(api, generate_token()) as bad_credential:
        assert bad_credential.get(CLUSTER_INFO).status_code == 401
