"""The root CA ConfigMap with the real controller-manager (`--root-ca-file`) and the real kubectl:
every namespace, old or new, gets `kube-root-ca.crt` holding the cluster CA; a deleted copy
comes back and an edited one is put right, while labels a user added stay."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from controllers.rootcacertpublisher import DESCRIPTION, DESCRIPTION_ANNOTATION
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from kube.testing.process import Process
from tests.controllers._kubectl import kubectl

pytestmark = pytest.mark.timeout(180)


def root_ca(admin_http: httpx.Client, ns: str) -> dict[str, Any] | None:
    resp = admin_http.get(f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt")
    return resp.json() if resp.status_code == 200 else None


def published(admin_http: httpx.Client, ns: str, ca: str) -> bool:
    cm = root_ca(admin_http, ns)
    return cm is not None and cm.get("data") == {"ca.crt": ca} and \
        cm["metadata"].get("annotations", {}).get(DESCRIPTION_ANNOTATION) == DESCRIPTION


def test_every_namespace_gets_the_cluster_ca(api: ApiServerHarness, manager: Process,
                                             admin_http: httpx.Client, tmp_path: Path) -> None:
    ca = api.pki.ca_cert.read_text()
    for ns in ("default", "kube-system"):
        eventually_sync(functools.partial(published, admin_http, ns, ca), timeout=20,
                        message=f"kube-root-ca.crt in {ns}")
    created = kubectl(api, "create", "namespace", "fresh", cache=tmp_path)
    assert created.returncode == 0, created.stderr
    eventually_sync(lambda: published(admin_http, "fresh", ca), timeout=20, message="kube-root-ca.crt in fresh")

    listed = kubectl(api, "get", "configmap", "kube-root-ca.crt", "-n", "fresh", cache=tmp_path)
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == ["NAME", "DATA", "AGE"] and row.split()[:2] == ["kube-root-ca.crt", "1"]
    out = kubectl(api, "get", "configmap", "kube-root-ca.crt", "-n", "fresh", "-o", "jsonpath={.data.ca\\.crt}",
                  cache=tmp_path)
    assert out.stdout == ca


def test_a_deleted_or_edited_copy_is_restored(api: ApiServerHarness, manager: Process,
                                              admin_http: httpx.Client, tmp_path: Path) -> None:
    ca = api.pki.ca_cert.read_text()
    assert kubectl(api, "create", "namespace", "tamper", cache=tmp_path).returncode == 0
    eventually_sync(lambda: published(admin_http, "tamper", ca), timeout=20, message="published")

    deleted = kubectl(api, "delete", "configmap", "kube-root-ca.crt", "-n", "tamper", cache=tmp_path)
    assert deleted.returncode == 0, deleted.stderr
    eventually_sync(lambda: published(admin_http, "tamper", ca), timeout=20, message="restored after delete")

    patch = json.dumps({"metadata": {"labels": {"keep": "me"}, "annotations": {DESCRIPTION_ANNOTATION: None}},
                        "data": {"ca.crt": "not a CA", "extra": "x"}})
    patched = kubectl(api, "patch", "configmap", "kube-root-ca.crt", "-n", "tamper", "--type=merge", "-p", patch,
                      cache=tmp_path)
    assert patched.returncode == 0, patched.stderr
    eventually_sync(lambda: published(admin_http, "tamper", ca), timeout=20, message="restored after edit")
    cm = root_ca(admin_http, "tamper")
    assert cm is not None and cm["metadata"]["labels"] == {"keep": "me"}
