"""The real kubectl (the version dispatcher on PATH, and 1.27 / 1.33 directly) against the API server."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.kubectl import sdk_bin

SDK_BIN = sdk_bin()
VERSIONS = [v for v in ("kubectl", "kubectl.1.27", "kubectl.1.33") if (SDK_BIN / v).exists() or shutil.which(v)]

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: web
        image: busybox
        ports: [{{containerPort: 80}}]
        env: [{{name: MODE, value: "{mode}"}}]
{extra}"""


def run(api: ApiServerHarness, binary: str, *args: str, cache: Path, stdin: str | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    exe = str(SDK_BIN / binary) if (SDK_BIN / binary).exists() else binary
    return subprocess.run([exe, "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir", str(cache), *args],
                          capture_output=True, text=True, input=stdin, timeout=timeout)


@pytest.fixture(params=VERSIONS)
def kubectl(request: pytest.FixtureRequest, api: ApiServerHarness, tmp_path: Path):  # type: ignore[no-untyped-def]
    binary = request.param
    ns = "k-" + binary.replace("kubectl", "x").replace(".", "-")

    def k(*args: str, stdin: str | None = None, check: bool = True,
          timeout: float = 60) -> subprocess.CompletedProcess[str]:
        out = run(api, binary, *args, cache=tmp_path / "cache", stdin=stdin, timeout=timeout)
        if check:
            assert out.returncode == 0, f"kubectl {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}"
        return out

    k("create", "-f", "-", stdin=f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n", check=False)
    k.ns = ns  # type: ignore[attr-defined]
    k.binary = binary  # type: ignore[attr-defined]
    return k


def test_version_and_api_resources(kubectl) -> None:  # type: ignore[no-untyped-def]
    out = kubectl("version").stdout
    assert "Server Version: v1.33" in out or 'GitVersion:"v1.33.0-picokube"' in out, out
    resources = kubectl("api-resources").stdout
    for name in ("pods", "deployments", "replicasets", "nodes", "namespaces", "events", "leases", "configmaps"):
        assert f"\n{name} " in resources or resources.startswith(name), resources
    assert "deploy" in resources and "apps/v1" in resources


def test_create_duplicate_not_found_messages(kubectl) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    doc = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n  namespace: {ns}\ndata:\n  a: '1'\n"
    assert "configmap/cm1 created" in kubectl("create", "-f", "-", stdin=doc).stdout
    dup = kubectl("create", "-f", "-", stdin=doc, check=False)
    assert dup.returncode != 0 and 'Error from server (AlreadyExists): error when creating "STDIN": ' \
        'configmaps "cm1" already exists' in dup.stderr
    missing = kubectl("get", "pod", "nope", "-n", ns, check=False)
    assert missing.returncode == 1 and 'Error from server (NotFound): pods "nope" not found' in missing.stderr
    bad = kubectl("create", "-f", "-", stdin=doc.replace("cm1", "cm2").replace("\ndata:", "\nbogus: 1\ndata:"),
                  check=False)
    assert bad.returncode != 0 and 'unknown field "bogus"' in bad.stderr
    invalid = kubectl("create", "-f", "-", stdin=doc.replace("name: cm1", "name: Not_Valid"), check=False)
    assert invalid.returncode != 0 and 'The ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: ' \
        '"Not_Valid"' in invalid.stderr


def test_apply_reapply_unchanged_and_strategic_merge(kubectl) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    first = DEPLOY.format(name="web", ns=ns, replicas=2, mode="a", extra="")
    assert "deployment.apps/web created" in kubectl("apply", "-f", "-", stdin=first).stdout
    assert "deployment.apps/web unchanged" in kubectl("apply", "-f", "-", stdin=first).stdout
    second = DEPLOY.format(name="web", ns=ns, replicas=3, mode="b", extra="")
    assert "deployment.apps/web configured" in kubectl("apply", "-f", "-", stdin=second).stdout
    got = kubectl("get", "deploy", "web", "-n", ns, "-o",
                  "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].ports[0].containerPort} "
                  "{.spec.template.spec.containers[0].env[0].value} {.metadata.generation}").stdout
    assert got == "3 80 b 2", got  # the merge kept ports, replaced the env value, bumped generation


def test_server_side_apply_conflicts(kubectl) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    doc = DEPLOY.format(name="ssa", ns=ns, replicas=1, mode="a", extra="")
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=doc).stdout
    other = doc.replace("replicas: 1", "replicas: 4")
    clash = kubectl("apply", "--server-side", "--field-manager=other", "-f", "-", stdin=other, check=False)
    assert clash.returncode != 0 and "conflict" in clash.stderr and ".spec.replicas" in clash.stderr
    kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-", stdin=other)
    assert kubectl("get", "deploy", "ssa", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "4"
    managers = kubectl("get", "deploy", "ssa", "-n", ns, "--show-managed-fields", "-o",
                       "jsonpath={.metadata.managedFields[*].manager}").stdout.split()
    assert "other" in managers


def test_server_side_apply_twice_changes_nothing(kubectl) -> None:  # type: ignore[no-untyped-def]
    """Ports without `protocol` are keyed by their defaulted key: re-applying keeps one port, generation 1."""
    ns = kubectl.ns
    doc = DEPLOY.format(name="ssa-idem", ns=ns, replicas=1, mode="a", extra="")
    for _ in range(3):
        assert "serverside-applied" in kubectl("apply", "--server-side", "-f", "-", stdin=doc).stdout
    got = kubectl("get", "deploy", "ssa-idem", "-n", ns, "-o", "jsonpath={.metadata.generation} "
                  "{.spec.template.spec.containers[0].ports[*].containerPort}"
                  " {.spec.template.spec.containers[0].ports[*].protocol}").stdout
    assert got == "1 80 TCP", got


def test_describe_shows_defaulted_probe(kubectl) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    pod = (f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: probed\n  namespace: {ns}\nspec:\n  containers:\n"
           "  - name: web\n    image: nginx\n    livenessProbe:\n      httpGet: {port: 8080}\n")
    kubectl("apply", "-f", "-", stdin=pod)
    out = kubectl("describe", "pod", "probed", "-n", ns).stdout
    assert "http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3" in out, out
    assert "pod/probed unchanged" in kubectl("apply", "-f", "-", stdin=pod).stdout


def test_tables_json_selectors_scale_delete(kubectl) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    kubectl("apply", "-f", "-", stdin=DEPLOY.format(name="tab", ns=ns, replicas=2, mode="a", extra=""))
    table = kubectl("get", "deploy", "-n", ns, "-o", "wide").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES",
                                "SELECTOR"]
    assert any(line.startswith("tab ") and "busybox" in line for line in table)
    assert '"kind": "Deployment"' in kubectl("get", "deploy", "tab", "-n", ns, "-o", "json").stdout
    kubectl("label", "deploy", "tab", "-n", ns, "tier=front")
    assert "tab" in kubectl("get", "deploy", "-n", ns, "-l", "tier in (front,back)").stdout
    assert "No resources found" in kubectl("get", "deploy", "-n", ns, "-l", "tier=back").stderr
    assert "tab" not in kubectl("get", "deploy", "-n", ns, "-l", "tier!=front").stdout
    assert "deployment.apps/tab scaled" in kubectl("scale", "deploy", "tab", "-n", ns, "--replicas=5").stdout
    assert kubectl("get", "deploy", "tab", "-n", ns, "-o", "jsonpath={.spec.replicas}").stdout == "5"
    out = kubectl("delete", "deploy", "tab", "-n", ns, "--wait=true", timeout=60).stdout
    assert 'deployment.apps "tab" deleted' in out
    assert kubectl("get", "deploy", "tab", "-n", ns, check=False).returncode == 1


def test_get_watch_prints_changes(kubectl, api: ApiServerHarness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ns = kubectl.ns
    exe = str(SDK_BIN / "kubectl")
    watch = subprocess.Popen([exe, "--kubeconfig", str(api.kubeconfig()), "--cache-dir", str(tmp_path / "w"),
                              "get", "configmaps", "-n", ns, "-w", "--no-headers"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        kubectl("create", "-f", "-", stdin=f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n"
                                           f"  namespace: {ns}\n")
        seen = ""
        assert watch.stdout is not None
        while "watched" not in seen and time.monotonic() < deadline:
            seen += watch.stdout.readline()
        assert "watched" in seen
    finally:
        watch.kill()
        watch.wait()
