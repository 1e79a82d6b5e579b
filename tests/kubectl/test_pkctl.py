"""pkctl as a user runs it, against a real API server: apply's created/configured/unchanged,
three-way merges, get's columns and formats, delete, kubectl's error wording, and names
resolved through the server's discovery."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from kube.client import discover
from kube.client.discovery import resources_from_resource_list
from kube.testing.apiserver import ApiServerHarness

pytestmark = pytest.mark.timeout(120)

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {{app: demo}}
data:
{data}
"""


def pkctl(api: ApiServerHarness, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubectl", *args, "--kubeconfig", str(api.kubeconfig("admin"))],
                          capture_output=True, text=True, timeout=60, input=stdin)


@pytest.fixture
def ns(api: ApiServerHarness) -> str:
    name = f"pk-{uuid.uuid4().hex[:6]}"
    out = pkctl(api, "apply", "-f", "-", stdin=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")
    assert out.returncode == 0 and f"namespace/{name} created" in out.stdout, out.stderr
    return name


def test_apply_created_unchanged_configured_and_three_way(api: ApiServerHarness, ns: str, tmp_path: Path) -> None:
    f = tmp_path / "cm.yaml"
    f.write_text(CM.format(data="  a: '1'\n  b: '2'"))
    assert pkctl(api, "apply", "-n", ns, "-f", str(f)).stdout == "configmap/settings created\n"
    assert pkctl(api, "-n", ns, "apply", "-f", str(f)).stdout == "configmap/settings unchanged\n"
    empty = pkctl(api, "apply", "-n", ns, "-f", "-", stdin="")
    assert empty.returncode == 1 and "no objects passed to apply" in empty.stderr
    exists = pkctl(api, "create", "-n", ns, "-f", str(f))
    assert exists.returncode == 1 and "Error from server (AlreadyExists)" in exists.stderr
    # Another writer adds a key; our next apply drops `b` but must keep theirs.
    with httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {api.token('admin')}"}) as c:
        resp = c.patch(f"/api/v1/namespaces/{ns}/configmaps/settings", json={"data": {"theirs": "x"}},
                       headers={"Content-Type": "application/merge-patch+json"})
        assert resp.status_code == 200, resp.text
    f.write_text(CM.format(data="  a: '10'"))
    assert pkctl(api, "apply", "-n", ns, "-f", str(f)).stdout == "configmap/settings configured\n"
    got = json.loads(pkctl(api, "get", "configmap", "settings", "-n", ns, "-o", "json").stdout)
    assert got["data"] == {"a": "10", "theirs": "x"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in got["metadata"]["annotations"]


def test_bad_manifest_names_file_and_line_and_writes_nothing(api: ApiServerHarness, ns: str,
                                                             tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text(CM.format(data="  a: '1'") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n")
    out = pkctl(api, "apply", "-n", ns, "-f", str(f))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: error parsing {f}: error converting YAML to JSON: yaml: line ")
    missing = pkctl(api, "get", "configmap", "settings", "-n", ns)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): configmaps "settings" not found'

    f.write_text("apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n")
    out = pkctl(api, "apply", "-n", ns, "-f", str(f))
    assert out.returncode == 1 and 'no matches for kind "Widget" in version "v1"' in out.stderr
    f.write_text("apiVersion: v1\nmetadata: {name: w}\n")
    out = pkctl(api, "apply", "-f", str(f))
    assert out.returncode == 1 and f'error validating "{f}"' in out.stderr and "kind not set" in out.stderr


def test_server_validation_error_is_shown(api: ApiServerHarness, ns: str) -> None:
    out = pkctl(api, "apply", "-n", ns, "-f", "-",
                stdin="apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\n"
                      "spec: {containers: [{name: c, image: x}]}\n")
    assert out.returncode == 1
    assert "Error from server (Invalid)" in out.stderr and "Bad_Name" in out.stderr


def test_get_prints_server_columns_and_formats(api: ApiServerHarness, ns: str) -> None:
    assert pkctl(api, "apply", "-n", ns, "-f", "-", stdin=CM.format(data="  a: '1'")).returncode == 0
    table = pkctl(api, "get", "cm", "-n", ns)
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["NAME", "DATA", "AGE"]
    assert any(r.split()[:2] == ["settings", "1"] for r in rows)
    assert pkctl(api, "get", "configmaps", "-n", ns, "-o", "name", "-l", "app=demo").stdout == \
        "configmap/settings\n"
    everywhere = pkctl(api, "get", "cm", "-A")
    assert everywhere.stdout.splitlines()[0].split()[0] == "NAMESPACE"
    empty = pkctl(api, "get", "pods", "-n", ns)
    assert empty.returncode == 0 and empty.stderr.strip() == f"No resources found in {ns} namespace."
    unknown = pkctl(api, "get", "widgets")
    assert unknown.returncode == 1 and unknown.stderr.strip() == \
        'error: the server doesn\'t have a resource type "widgets"'


def test_delete_then_not_found(api: ApiServerHarness, ns: str) -> None:
    assert pkctl(api, "apply", "-n", ns, "-f", "-", stdin=CM.format(data="  a: '1'")).returncode == 0
    out = pkctl(api, "delete", "configmap", "settings", "-n", ns)
    assert out.returncode == 0 and out.stdout == 'configmap "settings" deleted\n'
    again = pkctl(api, "delete", "cm/settings", "-n", ns)
    assert again.returncode == 1 and 'configmaps "settings" not found' in again.stderr
    assert pkctl(api, "delete", "cm/settings", "-n", ns, "--ignore-not-found").returncode == 0


def test_version_and_unreachable_server(api: ApiServerHarness) -> None:
    out = pkctl(api, "version")
    assert out.returncode == 0 and "Server Version: v" in out.stdout
    down = pkctl(api, "get", "pods", "--server", "https://127.0.0.1:1")
    assert down.returncode == 1 and "Traceback" not in down.stderr
    assert "The connection to the server 127.0.0.1:1 was refused" in down.stderr


DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: busybox}]}
"""


def test_names_resolve_through_the_servers_discovery(api: ApiServerHarness, ns: str) -> None:
    assert pkctl(api, "apply", "-n", ns, "-f", "-", stdin=DEPLOY).stdout == "deployment.apps/web created\n"
    for typed in ("deploy", "deployment", "Deployment", "deployments", "deployments.apps", "deploy.apps",
                  "deployments.v1.apps"):
        got = pkctl(api, "get", typed, "web", "-n", ns, "-o", "name")
        assert (got.returncode, got.stdout) == (0, "deployment.apps/web\n"), f"{typed}: {got.stderr}"
    assert "deployment.apps/web" in pkctl(api, "get", "all", "-n", ns, "-o", "name").stdout.split()
    assert pkctl(api, "get", "leases.coordination.k8s.io", "-n", ns).returncode == 0
    unknown = pkctl(api, "get", "widgets.apps", "-n", ns)
    assert unknown.returncode == 1 and unknown.stderr == 'error: the server doesn\'t have a resource type "widgets"\n'
    assert pkctl(api, "scale", "deploy/web", "--replicas", "0", "-n", ns).stdout == "deployment.apps/web scaled\n"
    assert pkctl(api, "delete", "-n", ns, "-f", "-", stdin=DEPLOY).stdout == 'deployment.apps "web" deleted\n'


async def test_aggregated_discovery_agrees_with_the_legacy_documents(api: ApiServerHarness) -> None:
    async with api.client() as client:
        mapper = await discover(client)
        legacy = resources_from_resource_list(await client.request("GET", "/api/v1"))
        for group in (await client.request("GET", "/apis"))["groups"]:
            legacy += resources_from_resource_list(
                await client.request("GET", f"/apis/{group['preferredVersion']['groupVersion']}"))
    assert sorted(mapper.preferred(), key=repr) == sorted(legacy, key=repr)
    assert mapper.resource_for("po") == next(r for r in legacy if r.plural == "pods")
