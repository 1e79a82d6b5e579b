"""The CronJob controller as a real controller-manager against a real API server.

Runs are made due at once by moving status.lastScheduleTime back (the controller then starts
the latest missed run), and the next run comes at the next minute of an every-minute
schedule, so a test waits at most about a minute for it. No kubelet: Jobs stay running
unless a test reports them finished, as a Job controller would.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio

from kube.api import CronJob, Event, Job, Namespace
from kube.api.batch_v1_cronjob import CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(240)


@pytest_asyncio.fixture
async def env(api: ApiServerHarness, manager: Process) -> AsyncIterator[tuple[RESTClient, str]]:
    namespace = f"cj-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as client:
        await client.create(Namespace.model_validate({"metadata": {"name": namespace}}))
        yield client, namespace


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


async def create_cronjob(client: RESTClient, ns: str, name: str, **spec: Any) -> CronJob:
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                               "containers": [{"name": "c", "image": "busybox"}]}}}}
    return await client.create(CronJob.model_validate({"metadata": {"name": name, "namespace": ns}, "spec": {
        "schedule": "* * * * *", "jobTemplate": template, **spec}}))


async def make_due(client: RESTClient, cj: CronJob) -> None:
    """Pretend the last run was three minutes ago: the current minute's run is due now."""
    past = datetime.now(UTC) - timedelta(minutes=3)
    await client.patch(CronJob, cj.metadata.name or "", {"status": {"lastScheduleTime": _ts(past)}},
                       cj.metadata.namespace, subresource="status")


async def owned_jobs(client: RESTClient, cj: CronJob) -> list[Job]:
    jobs = (await client.list(Job, cj.metadata.namespace)).items
    return sorted((j for j in jobs if (ref := j.metadata.controller_ref()) is not None
                   and ref.uid == cj.metadata.uid and j.metadata.deletion_timestamp is None),
                  key=lambda j: j.metadata.name or "")


async def reasons(client: RESTClient, cj: CronJob) -> list[str]:
    events = (await client.list(Event, cj.metadata.namespace)).items
    return [e.reason or "" for e in events if e.involved_object.uid == cj.metadata.uid]


async def test_runs_start_under_each_concurrency_policy(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    cjs = {policy: await create_cronjob(client, ns, policy.lower(), concurrencyPolicy=policy)
           for policy in ("Allow", "Forbid", "Replace")}
    for cj in cjs.values():
        await make_due(client, cj)

    async def first_runs() -> dict[str, Job] | None:
        found = {p: await owned_jobs(client, cj) for p, cj in cjs.items()}
        return {p: jobs[0] for p, jobs in found.items()} if all(len(j) == 1 for j in found.values()) else None
    first = await eventually(first_runs, timeout=30, message="each CronJob starts the run due")
    for policy, job in first.items():
        scheduled = datetime.fromisoformat((job.metadata.annotations or {})[CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION])
        assert job.metadata.name == f"{policy.lower()}-{int(scheduled.timestamp()) // 60}"
        assert scheduled.second == 0 and datetime.now(UTC) - scheduled < timedelta(seconds=90)

        async def recorded(policy: str = policy, job: Job = job, scheduled: datetime = scheduled) -> bool | None:
            fresh = await client.get(CronJob, policy.lower(), ns)
            return ([r.name for r in fresh.status.active or []] == [job.metadata.name]
                    and fresh.status.last_schedule_time == _ts(scheduled)
                    and "SuccessfulCreate" in await reasons(client, cjs[policy])) or None
        await eventually(recorded, timeout=20, message="status lists the run and an event tells of it")

    async def next_minute() -> bool | None:
        allow = await owned_jobs(client, cjs["Allow"])
        replace = await owned_jobs(client, cjs["Replace"])
        replaced = len(replace) == 1 and replace[0].metadata.uid != first["Replace"].metadata.uid
        return (len(allow) == 2 and replaced) or None
    await eventually(next_minute, timeout=90, interval=1, message="the next minute's runs start")
    allow = await client.get(CronJob, "allow", ns)
    assert len(allow.status.active or []) == 2
    replace = await client.get(CronJob, "replace", ns)
    assert [r.uid for r in replace.status.active or []] != [first["Replace"].metadata.uid]
    assert "SuccessfulDelete" in await reasons(client, cjs["Replace"])

    async def forbidden() -> bool | None:
        return "JobAlreadyActive" in await reasons(client, cjs["Forbid"]) or None
    await eventually(forbidden, timeout=30, message="Forbid skips the run while its Job runs")
    assert [j.metadata.uid for j in await owned_jobs(client, cjs["Forbid"])] == [first["Forbid"].metadata.uid]


async def finish(client: RESTClient, job: Job, condition: str, start: datetime) -> None:
    end = start + timedelta(seconds=5)
    conditions = [{"type": "SuccessCriteriaMet" if condition == "Complete" else "FailureTarget", "status": "True",
                   "lastTransitionTime": _ts(end), "lastProbeTime": _ts(end)},
                  {"type": condition, "status": "True", "lastTransitionTime": _ts(end), "lastProbeTime": _ts(end)}]
    status: dict[str, Any] = {"startTime": _ts(start), "conditions": conditions,
                              "succeeded" if condition == "Complete" else "failed": 1, "active": 0}
    if condition == "Complete":
        status["completionTime"] = _ts(end)
    await client.patch(Job, job.metadata.name or "", {"status": status}, job.metadata.namespace,
                       subresource="status")


async def test_history_limits_and_last_successful_time(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    cj = await create_cronjob(client, ns, "history", suspend=True, successfulJobsHistoryLimit=1,
                              failedJobsHistoryLimit=1)
    owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "history", "uid": cj.metadata.uid,
             "controller": True, "blockOwnerDeletion": True}
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    outcomes = ["Complete", "Complete", "Complete", "Failed", "Failed"]
    for i, outcome in enumerate(outcomes):
        job = await client.create(Job.model_validate({
            "metadata": {"name": f"history-{i}", "namespace": ns, "ownerReferences": [owner]},
            "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never",
                                                            "containers": [{"name": "c", "image": "busybox"}]}}}}))
        await finish(client, job, outcome, base + timedelta(minutes=i))

    async def trimmed() -> list[str] | None:
        names = [j.metadata.name or "" for j in await owned_jobs(client, cj)]
        return names if names == ["history-2", "history-4"] else None
    await eventually(trimmed, timeout=30, message="only the newest finished Jobs of each kind remain")

    async def last_success() -> bool | None:
        fresh = await client.get(CronJob, "history", ns)
        return fresh.status.last_successful_time == _ts(base + timedelta(minutes=2, seconds=5)) or None
    # The status write follows the deletions in the same sync; wait for it, do not race it.
    await eventually(last_success, timeout=20, message="lastSuccessfulTime is the newest completion")

    async def deleted_events() -> bool | None:
        events = (await client.list(Event, ns)).items
        said = {e.message for e in events
                if e.involved_object.uid == cj.metadata.uid and e.reason == "SuccessfulDelete"}
        return said == {"Deleted job history-0", "Deleted job history-1", "Deleted job history-3"} or None
    await eventually(deleted_events, timeout=20, message="each deletion is an event")
