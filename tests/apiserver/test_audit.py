"""The audit log: one audit.k8s.io/v1 Event per request, with user, verb, objectRef and code,
and never a token or a Secret's data."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync


@pytest.fixture(scope="module")
def audited(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiServerHarness, Path]]:
    work = tmp_path_factory.mktemp("audited")
    log = work / "audit.log"
    with ApiServerHarness(work, etcd_endpoint=etcd_endpoint, extra_args=("--audit-log-path", str(log))) as h:
        yield h, log


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_requests_are_audited_without_secrets(audited: tuple[ApiServerHarness, Path]) -> None:
    api, log = audited
    token = api.token("admin")
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    with httpx.Client(base_url=api.server, verify=ctx, headers={"Authorization": f"Bearer {token}",
                                                                  "User-Agent": "audit-test/1"}) as c:
        secret = {"metadata": {"name": "creds"}, "stringData": {"password": "hunter2-very-secret"}}
        assert c.post("/api/v1/namespaces/default/secrets", json=secret).status_code == 201
        assert c.get("/api/v1/namespaces/default/secrets/creds").status_code == 200
        assert c.get("/apis/apps/v1/deployments").status_code == 200
    with httpx.Client(base_url=api.server, verify=ctx) as anon:
        assert anon.get("/api/v1/pods").status_code == 401

    def written() -> list[dict[str, Any]]:
        return [e for e in events(log) if e.get("userAgent") == "audit-test/1" or e["responseStatus"]["code"] == 401]

    got = eventually_sync(lambda: written() if len(written()) >= 4 else None, timeout=10, message="4 audit events")
    create = next(e for e in got if e["verb"] == "create")
    assert create["apiVersion"] == "audit.k8s.io/v1" and create["level"] == "Metadata"
    assert create["user"]["username"] == "admin" and "system:masters" in create["user"]["groups"]
    assert create["objectRef"] == {"apiVersion": "v1", "namespace": "default", "resource": "secrets"}
    assert create["responseStatus"]["code"] == 201
    get = next(e for e in got if e["verb"] == "get")
    assert get["objectRef"]["name"] == "creds"
    listed = next(e for e in got if e["verb"] == "list")
    assert listed["objectRef"] == {"apiGroup": "apps", "apiVersion": "v1", "resource": "deployments"}
    denied = next(e for e in got if e["responseStatus"]["code"] == 401)
    assert denied["user"]["username"] == "system:anonymous"
    text = log.read_text()
    assert token not in text and "hunter2" not in text and "aHVudGVyMi" not in text


def test_impersonation_is_audited_with_both_users(audited: tuple[ApiServerHarness, Path]) -> None:
    api, log = audited
    ctx = ssl.create_default_context(cafile=str(api.pki.ca_cert))
    with httpx.Client(base_url=api.server, verify=ctx, headers={"Authorization": f"Bearer {api.token('admin')}",
                                                                  "User-Agent": "audit-impersonation/1"}) as c:
        resp = c.get("/api/v1/namespaces/default/configmaps",
                     headers=[("Impersonate-User", "jane"), ("Impersonate-Group", "developers"),
                              ("Impersonate-Extra-Scopes", "view")])
        assert resp.status_code == 403

    def written() -> list[dict[str, Any]]:
        return [e for e in events(log) if e.get("userAgent") == "audit-impersonation/1"]

    event = eventually_sync(lambda: next(iter(written()), None), timeout=10, message="the audit event")
    assert event["user"]["username"] == "admin" and "system:masters" in event["user"]["groups"]
    assert event["impersonatedUser"] == {"username": "jane", "groups": ["developers", "system:authenticated"],
                                         "extra": {"scopes": ["view"]}}
    assert event["responseStatus"]["code"] == 403
