"""The OpenAPI documents as clients see them: upstream's descriptions in `kubectl explain`,
default validation on every kubectl from 1.27 (v2 protobuf) to 1.33 (v3), and the raw
documents' shape (operations with their group-version-kind and `fieldValidation`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from apiserver.openapi.proto import openapiv2_pb2
from kube.testing.apiserver import ApiServerHarness

SDK_BIN = Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent
ALL = [f"kubectl.1.{m}" for m in range(27, 34) if (SDK_BIN / f"kubectl.1.{m}").exists()]
EXPLAIN = [b for b in ("kubectl.1.27", "kubectl.1.28", "kubectl.1.30", "kubectl.1.33") if b in ALL]
PROTO_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

pytestmark = pytest.mark.skipif(not ALL, reason="the versioned kubectl binaries are not installed")


def kubectl(api: ApiServerHarness, binary: str, *args: str, cache: Path,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SDK_BIN / binary), "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir",
                           str(cache), *args], capture_output=True, text=True, input=stdin, timeout=60, check=False)


@pytest.mark.parametrize("binary", EXPLAIN)
def test_explain_shows_upstream_descriptions(api: ApiServerHarness, tmp_path: Path, binary: str) -> None:
    out = kubectl(api, binary, "explain", "pods.spec.containers", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "List of containers belonging to the pod." in out.stdout
    assert "imagePullPolicy\t<string>" in out.stdout and "Image pull policy. One of Always, Never" in out.stdout
    strategy = kubectl(api, binary, "explain", "deployment.spec.strategy.type", cache=tmp_path)
    assert strategy.returncode == 0, strategy.stderr
    # Upstream's schema lists the values in the description (it carries no enum for this field).
    assert 'Type of deployment. Can be "Recreate" or "RollingUpdate"' in strategy.stdout


@pytest.mark.parametrize("binary", ALL)
def test_apply_with_default_validation(api: ApiServerHarness, tmp_path: Path, binary: str) -> None:
    name = "v-" + binary.rsplit(".", 1)[-1]
    doc = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  a: b\n"
    created = kubectl(api, binary, "apply", "-f", "-", cache=tmp_path, stdin=doc)
    assert created.returncode == 0 and f"configmap/{name} created" in created.stdout, created.stderr
    bogus = kubectl(api, binary, "apply", "-f", "-", cache=tmp_path,
                    stdin=doc.replace(f"name: {name}", f"name: {name}-x").replace("\ndata:", "\nbogus: 1\ndata:"))
    assert bogus.returncode != 0 and 'unknown field "bogus"' in bogus.stderr, bogus.stderr


@pytest.mark.parametrize("binary", [b for b in ("kubectl.1.28", "kubectl.1.33") if b in ALL])
def test_apply_of_an_unknown_kind_says_no_matches(api: ApiServerHarness, tmp_path: Path, binary: str) -> None:
    out = kubectl(api, binary, "apply", "-f", "-", cache=tmp_path,
                  stdin="apiVersion: v1\nkind: Widget\nmetadata:\n  name: w\n")
    assert 'no matches for kind "Widget" in version "v1"' in out.stderr, out.stderr


def test_openapi_v2_as_protobuf_and_json(admin_http: httpx.Client) -> None:
    proto = admin_http.get("/openapi/v2", headers={"Accept": f"{PROTO_V2}, application/json"})
    assert proto.status_code == 200 and proto.headers["content-type"].endswith("+protobuf")
    doc = openapiv2_pb2.Document.FromString(proto.content)
    definitions = {d.name: d.value for d in doc.definitions.additional_properties}
    pod = definitions["io.k8s.api.core.v1.Pod"]
    assert pod.description.startswith("Pod is a collection of containers")
    assert any(e.name == "x-kubernetes-group-version-kind" and '"kind": "Pod"' in e.value.yaml
               for e in pod.vendor_extension)
    paths = {p.name: p.value for p in doc.paths.path}
    patch = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch
    names = {p.parameter.non_body_parameter.query_parameter_sub_schema.name for p in patch.parameters}
    assert "fieldValidation" in names
    as_json = admin_http.get("/openapi/v2", headers={"Accept": "application/json"}).json()
    assert len(as_json["definitions"]) == len(definitions) and set(as_json["paths"]) == set(paths)
    assert "/api/v1/namespaces/{namespace}/pods/{name}/exec" in paths
    assert "/apis/storage.k8s.io/v1/volumeattachments/{name}" not in paths  # only what is served
    assert admin_http.get("/openapi/v2", headers={"Accept": "application/xml"}).status_code == 406


def test_openapi_v3_group_document(admin_http: httpx.Client) -> None:
    index = admin_http.get("/openapi/v3").json()["paths"]
    doc = admin_http.get(index["apis/apps/v1"]["serverRelativeURL"]).json()
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert any(p["name"] == "fieldValidation" and p["schema"]["type"] == "string" for p in patch["parameters"])
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]
    schemas = doc["components"]["schemas"]
    spec = schemas["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]
    assert spec["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]
    assert spec["description"].startswith("Specification of the desired behavior of the Deployment.")
    assert "io.k8s.api.core.v1.Pod" not in schemas  # only what the group's operations reference
