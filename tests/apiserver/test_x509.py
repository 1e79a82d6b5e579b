"""x509 client certificates: CN is the user and O the groups, authorized like any other user;
a certificate from another CA never gets a connection."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from picokube.pki import ensure_cluster_pki, issue_client_certificate


def client_for(api: ApiServerHarness, tmp: Path, cert: bytes, key: bytes) -> httpx.Client:
    (tmp / "c.crt").write_bytes(cert)
    (tmp / "c.key").write_bytes(key)
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    ctx.load_cert_chain(str(tmp / "c.crt"), str(tmp / "c.key"))
    return httpx.Client(base_url=api.server, verify=ctx, timeout=10)


def test_certificate_names_user_and_groups(api: ApiServerHarness, tmp_path: Path) -> None:
    cert, key = issue_client_certificate(api.pki, user="jane", groups=("system:masters",))
    with client_for(api, tmp_path, cert, key) as c:
        resp = c.get("/api/v1/namespaces")
        assert resp.status_code == 200, resp.text
        review = c.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                        json={"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
        assert review.status_code == 201 and review.json()["status"]["allowed"] is True


def test_certificate_user_without_rights_is_forbidden_not_unauthorized(api: ApiServerHarness, tmp_path: Path) -> None:
    cert, key = issue_client_certificate(api.pki, user="bob", groups=("developers",))
    with client_for(api, tmp_path, cert, key) as c:
        resp = c.get("/api/v1/namespaces/default/secrets")
        assert resp.status_code == 403
        assert resp.json()["message"] == ('secrets is forbidden: User "bob" cannot list resource "secrets" in API '
                                          'group "" in the namespace "default"')


def test_certificate_from_another_ca_is_refused(api: ApiServerHarness, tmp_path: Path) -> None:
    other = ensure_cluster_pki(tmp_path / "other-pki")
    cert, key = issue_client_certificate(other, user="mallory", groups=("system:masters",))
    with client_for(api, tmp_path, cert, key) as c, pytest.raises(httpx.TransportError):
        c.get("/api/v1/namespaces")


def test_token_clients_still_connect(api: ApiServerHarness) -> None:
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    with httpx.Client(base_url=api.server, verify=ctx, headers={"Authorization": f"Bearer {api.token('admin')}"}) as c:
        assert c.get("/api/v1/namespaces").status_code == 200
        assert httpx.get(f"{api.server}/api/v1/namespaces", verify=ctx).status_code == 401
