"""pkctl and CronJobs against a real API server: `create cronjob`, `create job --from=cronjob/...`,
`get cronjobs` and `describe cronjob`."""

from __future__ import annotations

import json
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


def test_create_cronjob_then_a_job_from_it(api: ApiServerHarness, ns: str) -> None:
    created = pkctl(api, "create", "cronjob", "tick", "-n", ns, "--image=busybox:1.36", "--schedule=*/1 * * * *",
                    "--", "date")
    assert (created.returncode, created.stdout) == (0, "cronjob.batch/tick created\n"), created.stderr
    table = pkctl(api, "get", "cj", "-n", ns).stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert table[1].split()[:7] == ["tick", "*/1", "*", "*", "*", "*", "<none>"]
    text = pkctl(api, "describe", "cronjob", "tick", "-n", ns).stdout
    for line in ("Schedule:", "Concurrency Policy:", "Successful Job History Limit:", "Last Schedule Time:",
                 "Active Jobs:", "Pod Template:"):
        assert line in text, text

    manual = pkctl(api, "create", "job", "tick-now", "-n", ns, "--from=cronjob/tick")
    assert (manual.returncode, manual.stdout) == (0, "job.batch/tick-now created\n"), manual.stderr
    job = json.loads(pkctl(api, "get", "job", "tick-now", "-n", ns, "-o", "json").stdout)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "tick", True)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["date"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"

    missing = pkctl(api, "create", "job", "x", "-n", ns, "--from=cronjob/nope")
    assert missing.returncode == 1 and "not found" in missing.stderr
    both = pkctl(api, "create", "job", "x", "-n", ns, "--from=cronjob/tick", "--image=busybox")
    assert both.returncode == 1 and "either --image or --from must be specified" in both.stderr
