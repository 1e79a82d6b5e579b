"""batch/v1 Jobs through the API: defaults, the generated selector, validation, immutability, tables."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from apiserver.endpoints.tables import to_table
from tests.apiserver.conftest import causes


def job(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "c", "image": "busybox"}]}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": body}


def test_job_defaults_and_generated_selector(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("pi"))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    uid, spec = body["metadata"]["uid"], body["spec"]
    assert (spec["parallelism"], spec["completions"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False and spec["manualSelector"] is False
    assert spec["podReplacementPolicy"] == "TerminatedOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid, "job-name": "pi"}
    assert body["metadata"]["generation"] == 1 and body["status"] == {}


def test_parallelism_alone_leaves_completions_unset(c: httpx.Client, ns: str) -> None:
    spec = c.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("queue", parallelism=3)).json()["spec"]
    assert spec["parallelism"] == 3 and "completions" not in spec


def test_job_validation_names_every_field(c: httpx.Client, ns: str) -> None:
    bad = job("bad", parallelism=-1, backoffLimit=-2, completionMode="Indexed",
              template={"spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox"}]}})
    bad["spec"].pop("completions", None)
    found = causes(c.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=bad))
    assert found["spec.parallelism"] == "Invalid value: -1: must be greater than or equal to 0"
    assert found["spec.backoffLimit"] == "Invalid value: -2: must be greater than or equal to 0"
    assert found["spec.completions"] == "Required value: when completion mode is Indexed"
    assert found["spec.template.spec.restartPolicy"] == (
        'Unsupported value: "Always": supported values: "OnFailure", "Never"')


def test_selector_and_completions_are_immutable_but_suspend_is_not(c: httpx.Client, ns: str) -> None:
    created = c.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("fixed", completions=3)).json()
    patched = c.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/fixed", json={"spec": {"completions": 4}},
                      headers={"Content-Type": "application/merge-patch+json"})
    assert causes(patched)["spec.completions"] == "Invalid value: 4: field is immutable"
    suspended = c.patch(f"/apis/batch/v1/namespaces/{ns}/jobs/fixed", json={"spec": {"suspend": True}},
                        headers={"Content-Type": "application/merge-patch+json"})
    assert suspended.status_code == 200, suspended.text
    assert suspended.json()["metadata"]["generation"] == created["metadata"]["generation"] + 1


def test_discovery_lists_jobs(c: httpx.Client) -> None:
    resources = {r["name"]: r for r in c.get("/apis/batch/v1").json()["resources"]}
    assert resources["jobs"]["namespaced"] and resources["jobs"]["categories"] == ["all"]
    assert "jobs/status" in resources


def test_job_table_cells() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    meta = {"name": "pi", "creationTimestamp": "2024-05-01T11:55:00Z"}
    spec = {"completions": 5, "parallelism": 2,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}
    running = {"startTime": "2024-05-01T11:56:00Z", "succeeded": 2}
    done = {"startTime": "2024-05-01T11:56:00Z", "completionTime": "2024-05-01T11:56:42Z", "succeeded": 5,
            "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}
    table = to_table("Job", [{"metadata": meta, "spec": spec, "status": running},
                             {"metadata": meta, "spec": spec, "status": done},
                             {"metadata": meta, "spec": {"parallelism": 3}, "status": {}}], now=now)
    assert [(col["name"], col["priority"]) for col in table["columnDefinitions"]] == [
        ("Name", 0), ("Status", 0), ("Completions", 0), ("Duration", 0), ("Age", 0), ("Containers", 1),
        ("Images", 1), ("Selector", 1)]
    rows = [r["cells"] for r in table["rows"]]
    assert rows[0] == ["pi", "Running", "2/5", "4m", "5m", "pi", "perl", "batch.kubernetes.io/controller-uid=u"]
    assert rows[1][:4] == ["pi", "Complete", "5/5", "42s"]
    assert rows[2][1:4] == ["Running", "0/1 of 3", ""]
