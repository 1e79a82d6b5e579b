"""Protobuf answers: a client that lists `application/vnd.kubernetes.protobuf` first gets the
object (or list) in Kubernetes protobuf, carrying the same content as the JSON answer; a
client that prefers JSON, or asks for Tables, gets JSON."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from apiserver.protobuf.codec import MEDIA_TYPE, decode_object
from kube.testing.apiserver import ApiServerHarness

SDK_BIN = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent
BOTH = {"Accept": f"{MEDIA_TYPE}, application/json"}


def test_objects_and_lists_as_protobuf(admin_http: httpx.Client) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pbresp"}, "data": {"k": "v"}}
    created = admin_http.post("/api/v1/namespaces/default/configmaps", json=cm, headers=BOTH)
    assert created.status_code == 201 and created.headers["content-type"] == MEDIA_TYPE
    assert decode_object(created.content)["data"] == {"k": "v"}
    as_json = admin_http.get("/api/v1/namespaces/default/configmaps/pbresp").json()
    as_proto = admin_http.get("/api/v1/namespaces/default/configmaps/pbresp", headers=BOTH)
    assert as_proto.headers["content-type"] == MEDIA_TYPE
    assert decode_object(as_proto.content) == as_json
    listed = admin_http.get("/api/v1/namespaces/default/configmaps", headers=BOTH)
    items = decode_object(listed.content)
    assert items["kind"] == "ConfigMapList" and "pbresp" in [i["metadata"]["name"] for i in items["items"]]
    json_first = admin_http.get("/api/v1/namespaces/default/configmaps/pbresp",
                                headers={"Accept": f"application/json, {MEDIA_TYPE}"})
    assert json_first.headers["content-type"] == "application/json"
    missing = admin_http.get("/api/v1/namespaces/default/configmaps/nope", headers=BOTH)
    assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"


@pytest.mark.skipif(not (SDK_BIN / "kubectl.1.33").exists(), reason="kubectl 1.33 is not installed")
def test_kubectl_describe_reads_protobuf(api: ApiServerHarness, tmp_path: Path) -> None:
    def k(*args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([str(SDK_BIN / "kubectl.1.33"), "--kubeconfig", str(api.kubeconfig("admin")),
                              "--cache-dir", str(tmp_path), *args], capture_output=True, text=True, timeout=60,
                             check=False)
        assert out.returncode == 0, out.stderr
        return out

    k("-n", "default", "create", "deployment", "pbdesc", "--image=busybox", "--replicas=3")
    described = k("-n", "default", "describe", "deployment", "pbdesc", "-v=8")
    assert "Replicas:               3 desired" in described.stdout
    assert f"Content-Type: {MEDIA_TYPE}" in described.stderr  # an answer kubectl decoded from protobuf
