"""Custom resources through the real kubectl (default validation) and the Python ecosystem's
generic clients: the official client's dynamic client and lightkube's generic resources."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes import dynamic
from lightkube import AsyncClient, KubeConfig
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.meta_v1 import ObjectMeta

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from kube.testing.kubectl import kubectl_binary

pytestmark = pytest.mark.timeout(180)

CRD = (Path(__file__).parents[2] / "examples" / "crontab-crd.yaml").read_text()
TAB = """\
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {{name: {name}, namespace: default}}
spec: {{cronSpec: "* * * * */5", image: my-cron-image{extra}}}
"""


@pytest.fixture(scope="module")
def k(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    cache = tmp_path_factory.mktemp("kubectl-cache")
    binary = kubectl_binary(33)

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(binary), "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir", str(cache),
                               *args], capture_output=True, text=True, input=stdin, timeout=60)
    return run


@pytest.fixture(scope="module")
def crontabs(k, admin_http: httpx.Client) -> Iterator[None]:  # type: ignore[no-untyped-def]
    applied = k("apply", "-f", "-", stdin=CRD)
    assert applied.returncode == 0, applied.stderr
    eventually_sync(lambda: admin_http.get("/apis/stable.example.com/v1/namespaces/default/crontabs").status_code
                    == 200, timeout=10, message="crontabs served")
    yield


def test_kubectl_apply_get_explain_scale_and_status(k, crontabs: None) -> None:  # type: ignore[no-untyped-def]
    applied = k("apply", "-f", "-", stdin=TAB.format(name="tab", extra=", bogus: 1"))
    assert applied.returncode != 0 and 'unknown field "spec.bogus"' in applied.stderr, applied.stderr
    applied = k("apply", "-f", "-", stdin=TAB.format(name="tab", extra=""))
    assert applied.returncode == 0 and "crontab.stable.example.com/tab created" in applied.stdout, applied.stderr
    got = k("get", "ct", "tab")
    assert got.stdout.split("\n")[0].split() == ["NAME", "SPEC", "REPLICAS"], got.stdout
    assert got.stdout.split("\n")[1].split() == ["tab", "*", "*", "*", "*", "*/5", "1"]

    bad = k("apply", "-f", "-", stdin=TAB.format(name="bad", extra=", replicas: 20").replace('"* * * * */5"', "x"))
    assert bad.returncode != 0
    assert 'The CronTab "bad" is invalid' in bad.stderr, bad.stderr
    assert "spec.replicas in body should be less than or equal to 10" in bad.stderr
    assert "spec.cronSpec in body should match" in bad.stderr

    explained = k("explain", "crontabs.spec")
    assert explained.returncode == 0 and "What the cron tab runs." in explained.stdout, explained.stderr
    assert "image" in explained.stdout and "The image to run." in explained.stdout

    scaled = k("scale", "crontab/tab", "--replicas=3")
    assert scaled.returncode == 0 and "scaled" in scaled.stdout, scaled.stderr
    assert json.loads(k("get", "ct", "tab", "-o", "json").stdout)["spec"]["replicas"] == 3

    patched = k("patch", "crontab", "tab", "--subresource=status", "--type=merge",
                "-p", '{"status": {"phase": "Running", "replicas": 3}}')
    assert patched.returncode == 0, patched.stderr
    obj = json.loads(k("get", "ct", "tab", "-o", "json").stdout)
    assert obj["status"] == {"phase": "Running", "replicas": 3} and obj["metadata"]["generation"] == 2

    deleted = k("delete", "crontab", "tab")
    assert deleted.returncode == 0 and 'crontab.stable.example.com "tab" deleted' in deleted.stdout


def test_the_readme_example(k, crontabs: None) -> None:  # type: ignore[no-untyped-def]
    """README: apply examples/crontab.yaml, list it with its printer columns, scale it."""
    example = Path(__file__).parents[2] / "examples" / "crontab.yaml"
    applied = k("apply", "-n", "default", "-f", str(example))
    assert applied.returncode == 0 and "crontab.stable.example.com/my-crontab created" in applied.stdout, applied.stderr
    rows = [line.split() for line in k("get", "crontabs", "-n", "default").stdout.splitlines()]
    assert ["my-crontab", "*/5", "*", "*", "*", "*", "1"] in rows, rows
    assert k("scale", "crontab/my-crontab", "-n", "default", "--replicas", "3").returncode == 0
    assert json.loads(k("get", "ct", "my-crontab", "-n", "default", "-o", "json").stdout)["spec"]["replicas"] == 3
    assert k("delete", "-n", "default", "-f", str(example)).returncode == 0


def test_the_official_dynamic_client(api: ApiServerHarness, crontabs: None) -> None:
    api_client = k8s_config.new_client_from_config(str(api.kubeconfig("admin")))
    dyn = dynamic.DynamicClient(api_client)
    tabs = dyn.resources.get(api_version="stable.example.com/v1", kind="CronTab")
    created = tabs.create(body={"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                                "metadata": {"name": "dyn"}, "spec": {"image": "x"}}, namespace="default")
    assert created.spec.replicas == 1
    patched = tabs.patch(name="dyn", namespace="default", body={"spec": {"image": "y"}},
                         content_type="application/merge-patch+json")
    assert patched.spec.image == "y" and patched.metadata.generation == 2
    assert [t.metadata.name for t in tabs.get(namespace="default").items] == ["dyn"]
    tabs.delete(name="dyn", namespace="default")
    api_client.close()
    assert isinstance(k8s_client.ApiClient, type)


def test_lightkube_generic_resources(api: ApiServerHarness, crontabs: None) -> None:
    CronTab = create_namespaced_resource("stable.example.com", "v1", "CronTab", "crontabs")

    async def scenario() -> None:
        client = AsyncClient(KubeConfig.from_file(str(api.kubeconfig("admin"))), namespace="default")
        try:
            await client.create(CronTab(metadata=ObjectMeta(name="light"), spec={"image": "z", "replicas": 2}))
            got = await client.get(CronTab, "light")
            assert got.spec == {"image": "z", "replicas": 2}
            names = [t.metadata.name async for t in client.list(CronTab) if t.metadata is not None]
            assert names == ["light"]
            await client.delete(CronTab, "light")
        finally:
            await client.close()
    asyncio.run(scenario())


def test_a_second_version_and_deleting_the_crd(k, admin_http: httpx.Client,  # type: ignore[no-untyped-def]
                                               crontabs: None, tmp_path: Path) -> None:
    assert k("apply", "-f", "-", stdin=TAB.format(name="last", extra="")).returncode == 0
    two = CRD.replace("  versions:\n  - name: v1", "  versions:\n  - name: v2\n    served: true\n    storage: false\n"
                      "    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
                      "  - name: v1")
    assert k("apply", "-f", "-", stdin=two).returncode == 0
    eventually_sync(lambda: admin_http.get("/apis/stable.example.com/v2/namespaces/default/crontabs/last")
                    .status_code == 200, timeout=10, message="v2 served")
    got = k("get", "crontabs.v2.stable.example.com", "last", "-o", "jsonpath={.apiVersion}")
    assert got.stdout == "stable.example.com/v2", got.stderr
    deleted = k("delete", "crd", "crontabs.stable.example.com")
    assert deleted.returncode == 0, deleted.stderr
    eventually_sync(lambda: admin_http.get("/apis/stable.example.com/v1").status_code == 404, timeout=20,
                    message="crontabs no longer served")
