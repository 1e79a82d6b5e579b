"""batch/v1 CronJobs through the API: defaults, validation of schedules and time zones, tables, discovery."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from apiserver.endpoints.tables import to_table
from tests.apiserver.conftest import causes


def cronjob(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


def test_cronjob_defaults(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cronjob("nightly"))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    spec = body["spec"]
    assert spec["concurrencyPolicy"] == "Allow" and spec["suspend"] is False
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    job_spec = spec["jobTemplate"]["spec"]
    assert (job_spec["backoffLimit"], job_spec["completions"], job_spec["parallelism"]) == (6, 1, 1)
    assert "selector" not in job_spec
    assert body["metadata"]["generation"] == 1 and body["status"] == {}


@pytest.mark.parametrize("schedule", ["0 0 * * *", "*/15 9-17 * JAN-MAR mon-fri", "0,30 * 1-15/2 * ?",
                                      "@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually",
                                      "@midnight", "@every 1h30m"])
def test_schedules_robfig_accepts_are_accepted(c: httpx.Client, ns: str, schedule: str) -> None:
    name = f"ok-{abs(hash(schedule)) % 10**8}"
    resp = c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cronjob(name, schedule=schedule))
    assert resp.status_code == 201, resp.text


def test_cronjob_validation_names_every_field(c: httpx.Client, ns: str) -> None:
    bad = cronjob("x" * 53, schedule="* * *", concurrencyPolicy="Sometimes", startingDeadlineSeconds=-1,
                  successfulJobsHistoryLimit=-1, timeZone="Mars/Olympus")
    bad["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    found = causes(c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=bad))
    assert found["metadata.name"] == f'Invalid value: "{"x" * 53}": must be no more than 52 characters'
    assert found["spec.schedule"] == 'Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]'
    assert found["spec.concurrencyPolicy"] == (
        'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"')
    assert found["spec.startingDeadlineSeconds"] == "Invalid value: -1: must be greater than or equal to 0"
    assert found["spec.successfulJobsHistoryLimit"] == "Invalid value: -1: must be greater than or equal to 0"
    assert found["spec.timeZone"] == 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'
    assert found["spec.jobTemplate.spec.template.spec.restartPolicy"] == (
        'Unsupported value: "Always": supported values: "OnFailure", "Never"')


def test_tz_in_schedule_is_rejected_and_time_zone_field_accepted(c: httpx.Client, ns: str) -> None:
    tz = causes(c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cronjob("tz", schedule="TZ=UTC 0 * * * *")))
    assert tz["spec.schedule"] == (
        'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead')
    explicit = "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
    for zone, message in (("Local", explicit), ("", "timeZone must be nil or non-empty string")):
        found = causes(c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cronjob("tz", timeZone=zone)))
        assert found["spec.timeZone"] == f'Invalid value: "{zone}": {message}'
    ok = c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=cronjob("tz", timeZone="Europe/Berlin"))
    assert ok.status_code == 201, ok.text


def test_job_template_may_not_set_a_selector(c: httpx.Client, ns: str) -> None:
    bad = cronjob("sel")
    bad["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    found = causes(c.post(f"/apis/batch/v1/namespaces/{ns}/cronjobs", json=bad))
    assert found["spec.jobTemplate.spec.selector"].endswith("`selector` will be auto-generated")


def test_cronjob_table_cells() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    meta = {"name": "nightly", "creationTimestamp": "2024-05-01T11:00:00Z"}
    spec = {"schedule": "*/1 * * * *", "suspend": False, "jobTemplate": {"spec": {
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}}
    status = {"active": [{"name": "nightly-1"}], "lastScheduleTime": "2024-05-01T11:59:00Z"}
    table = to_table("CronJob", [{"metadata": meta, "spec": spec, "status": status},
                                 {"metadata": meta, "spec": {"schedule": "@daily", "timeZone": "Asia/Tokyo"},
                                  "status": {}}], now=now)
    assert [(col["name"], col["priority"]) for col in table["columnDefinitions"]] == [
        ("Name", 0), ("Schedule", 0), ("Timezone", 0), ("Suspend", 0), ("Active", 0), ("Last Schedule", 0),
        ("Age", 0), ("Containers", 1), ("Images", 1), ("Selector", 1)]
    rows = [r["cells"] for r in table["rows"]]
    assert rows[0] == ["nightly", "*/1 * * * *", "<none>", "False", 1, "60s", "60m", "c", "busybox", "<none>"]
    assert rows[1][1:6] == ["@daily", "Asia/Tokyo", "<unset>", 0, "<none>"]


def test_discovery_lists_cronjobs(c: httpx.Client) -> None:
    resources = {r["name"]: r for r in c.get("/apis/batch/v1").json()["resources"]}
    cj = resources["cronjobs"]
    assert cj["namespaced"] and cj["categories"] == ["all"] and cj["shortNames"] == ["cj"]
    assert "cronjobs/status" in resources
