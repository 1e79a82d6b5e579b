"""Protobuf request bodies: kubectl 1.32+ sends its typed `create` commands as
`application/vnd.kubernetes.protobuf`; the server reads them as the JSON the same object
would have been, so the objects come out exactly as JSON-created ones do."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.protobuf.codec import MAGIC, MEDIA_TYPE
from apiserver.protobuf.descriptors import message_class
from kube.testing.apiserver import ApiServerHarness

SDK_BIN = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent
PROTOBUF_KUBECTLS = [b for b in ("kubectl.1.32", "kubectl.1.33") if (SDK_BIN / b).exists()]


def kubectl(api: ApiServerHarness, binary: str, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """Runs kubectl logging its request headers (-v=8) to stderr."""
    out = subprocess.run([str(SDK_BIN / binary), "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir",
                          str(cache), "-v=8", *args], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, f"kubectl {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}"
    return out


def get(api: ApiServerHarness, binary: str, *args: str, cache: Path) -> Any:
    return json.loads(kubectl(api, binary, "get", *args, "-o", "json", cache=cache).stdout)


@pytest.mark.skipif(not PROTOBUF_KUBECTLS, reason="kubectl 1.32+ is not installed")
@pytest.mark.parametrize("binary", PROTOBUF_KUBECTLS)
def test_typed_create_commands(api: ApiServerHarness, tmp_path: Path, binary: str) -> None:
    ns = "pb-" + binary.rsplit(".", 1)[-1]
    created = kubectl(api, binary, "create", "namespace", ns, cache=tmp_path)
    assert f"namespace/{ns} created" in created.stdout
    assert "Content-Type: application/vnd.kubernetes.protobuf" in created.stderr  # the body kubectl sent
    kubectl(api, binary, "-n", ns, "create", "configmap", "cm", "--from-literal=a=b", "--from-literal=zero=0",
            cache=tmp_path)
    kubectl(api, binary, "-n", ns, "create", "secret", "generic", "s", "--from-literal=p=hunter2", cache=tmp_path)
    kubectl(api, binary, "-n", ns, "create", "deployment", "d", "--image=busybox", "--replicas=0", "--port=80",
            cache=tmp_path)
    kubectl(api, binary, "-n", ns, "create", "serviceaccount", "robot", cache=tmp_path)
    token = kubectl(api, binary, "-n", ns, "create", "token", "robot", "--duration=1h", cache=tmp_path).stdout
    assert token.count(".") == 2  # a JWT

    assert get(api, binary, "-n", ns, "configmap", "cm", cache=tmp_path)["data"] == {"a": "b", "zero": "0"}
    assert get(api, binary, "-n", ns, "secret", "s", cache=tmp_path)["data"] == {"p": "aHVudGVyMg=="}
    deploy = get(api, binary, "-n", ns, "deployment", "d", cache=tmp_path)
    assert deploy["spec"]["replicas"] == 0  # a pointer set to zero stays set
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["image"] == "busybox" and deploy["metadata"]["labels"] == {"app": "d"}


def _pod_body() -> bytes:
    meta = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta")(name="raw", labels={"x": "1"})
    container = message_class("k8s.io.api.core.v1.Container")(name="c", image="busybox")
    container.resources.limits["cpu"].string = "500m"
    pod = message_class("k8s.io.api.core.v1.Pod")(metadata=meta)
    pod.spec.containers.append(container)
    pod.spec.terminationGracePeriodSeconds = 0
    envelope = message_class("k8s.io.apimachinery.pkg.runtime.Unknown")(raw=pod.SerializeToString())
    envelope.typeMeta.apiVersion, envelope.typeMeta.kind = "v1", "Pod"
    serialized: bytes = envelope.SerializeToString()
    return MAGIC + serialized


def test_a_protobuf_pod_over_http(admin_http: httpx.Client) -> None:
    created = admin_http.post("/api/v1/namespaces/default/pods", content=_pod_body(),
                              headers={"Content-Type": MEDIA_TYPE, "Accept": "application/json"})
    assert created.status_code == 201, created.text
    pod = created.json()
    assert pod["metadata"]["labels"] == {"x": "1"}
    # The limit arrived; the request is defaulted from it, as for any pod.
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m"}, "requests": {"cpu": "500m"}}
    assert pod["spec"]["terminationGracePeriodSeconds"] == 0


def test_a_malformed_protobuf_body_is_a_bad_request(admin_http: httpx.Client) -> None:
    for body in (b"not protobuf", MAGIC + b"\xff\xff"):
        r = admin_http.post("/api/v1/namespaces/default/configmaps", content=body,
                            headers={"Content-Type": MEDIA_TYPE})
        assert r.status_code == 400 and r.json()["reason"] == "BadRequest", r.text
