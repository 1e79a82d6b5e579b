"""pkctl and Jobs against a real API server: `create job`, `get jobs` and `describe job`."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from kube.testing.apiserver import ApiServerHarness

pytestmark = pytest.mark.timeout(120)


def pkctl(api: ApiServerHarness, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubectl", "--kubeconfig", str(api.kubeconfig("admin")), *args],
                          capture_output=True, text=True, timeout=60, input=stdin)


@pytest.fixture
def ns(api: ApiServerHarness) -> str:
    name = f"pk-{uuid.uuid4().hex[:6]}"
    out = pkctl(api, "apply", "-f", "-", stdin=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")
    assert out.returncode == 0, out.stderr
    return name


def test_create_get_and_describe_a_job(api: ApiServerHarness, ns: str) -> None:
    created = pkctl(api, "create", "job", "hello", "-n", ns, "--image=busybox:1.36", "--", "sh", "-c", "echo hi")
    assert (created.returncode, created.stdout) == (0, "job.batch/hello created\n"), created.stderr
    got = pkctl(api, "get", "job", "hello", "-n", ns, "-o", "json")
    assert got.returncode == 0, got.stderr
    assert '"command": [\n' in got.stdout and '"restartPolicy": "Never"' in got.stdout
    table = pkctl(api, "get", "jobs", "-n", ns).stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert table[1].split()[:3] == ["hello", "Running", "0/1"]
    text = pkctl(api, "describe", "job", "hello", "-n", ns).stdout
    for line in ("Parallelism:", "Completion Mode:", "Backoff Limit:", "Pods Statuses:", "Pod Template:"):
        assert line in text, text
    assert "batch.kubernetes.io/controller-uid=" in text
    no_image = pkctl(api, "create", "job", "x", "-n", ns)
    assert no_image.returncode == 1 and "either --image or --from must be specified" in no_image.stderr
