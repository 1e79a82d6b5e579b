"""CronJobs as a user runs them with the real kubectl, on a whole cluster with simulated nodes:
`kubectl create cronjob`, `kubectl create job --from=cronjob/...` (kubectl builds that Job
itself from the CronJob it reads), `kubectl get cronjobs`, and the scheduled run of an
every-minute schedule starting and completing."""

from __future__ import annotations

import json

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def test_kubectl_cronjob_lifecycle(cluster: Cluster, ns: str) -> None:
    out = cluster.kubectl_ok("create", "cronjob", "tick", "-n", ns, "--image=busybox:1.36",
                             "--schedule=*/1 * * * *", "--", "sh", "-c", "exit 0")
    assert out.strip() == "cronjob.batch/tick created"
    table = cluster.kubectl_ok("get", "cronjobs", "-n", ns).splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert table[1].split()[:8] == ["tick", "*/1", "*", "*", "*", "*", "<none>", "False"]
    wide = cluster.kubectl_ok("get", "cj", "-n", ns, "-o", "wide").splitlines()
    assert wide[0].split()[8:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[-3:] == ["tick", "busybox:1.36", "<none>"]

    out = cluster.kubectl_ok("create", "job", "tick-manual", "-n", ns, "--from=cronjob/tick")
    assert out.strip() == "job.batch/tick-manual created"
    manual = json.loads(cluster.kubectl_ok("get", "job", "tick-manual", "-n", ns, "-o", "json"))
    assert manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert manual["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=complete", "job/tick-manual", "--timeout=90s")

    def scheduled_run() -> dict[str, object] | None:
        jobs = json.loads(cluster.kubectl_ok("get", "jobs", "-n", ns, "-o", "json"))["items"]
        runs = [j for j in jobs if "batch.kubernetes.io/cronjob-scheduled-timestamp" in
                (j["metadata"].get("annotations") or {})]
        return runs[0] if runs else None
    run = eventually_sync(scheduled_run, timeout=100, interval=2)
    name = str(run["metadata"]["name"])  # type: ignore[index]
    assert name.startswith("tick-") and name[len("tick-"):].isdigit()
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=complete", f"job/{name}", "--timeout=90s")

    def last_schedule() -> list[str] | None:
        row = cluster.kubectl_ok("get", "cronjob", "tick", "-n", ns, "--no-headers").split()
        return row if row[-2] != "<none>" else None  # LAST SCHEDULE, before AGE
    row = eventually_sync(last_schedule, timeout=30)
    assert row[0] == "tick" and row[-2].endswith(("s", "m"))
    described = cluster.kubectl_ok("describe", "cronjob", "tick", "-n", ns)
    for line in ("Schedule:", "Concurrency Policy:", "Last Schedule Time:", "SuccessfulCreate"):
        assert line in described, described
    policy = next(line for line in described.splitlines() if line.startswith("Concurrency Policy:"))
    assert policy.split()[-1] == "Allow"
    assert "cronjob.batch/tick" in cluster.kubectl_ok("get", "all", "-n", ns, "-o", "name").split()
