"""The CronJob controller's pure parts: schedule parsing and next times (time zones and DST
included), the run due now with missed runs and a starting deadline, the requeue delay, the
decision of one sync under each concurrency policy, the Jobs it makes, and history limits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controllers.cronjob.jobs import job_from_template, job_name, jobs_to_delete
from controllers.cronjob.sync import plan_sync
from kube.api import CronJob, Job
from kube.api.batch_v1_cronjob import CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION
from kube.api.core_v1 import ObjectReference
from kube.cron.schedule import (
    Missed,
    ScheduleError,
    most_recent_schedule_time,
    next_schedule_delay,
    next_schedule_time,
    parse_schedule,
)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(("schedule", "after", "expected"), [
    ("*/15 * * * *", utc(2026, 1, 1, 10, 7), utc(2026, 1, 1, 10, 15)),
    ("0 9-17/4 * * mon-fri", utc(2026, 1, 2, 17, 30), utc(2026, 1, 5, 9, 0)),  # Friday evening -> Monday
    ("30 2 1 jan,jul *", utc(2026, 2, 1), utc(2026, 7, 1, 2, 30)),
    ("@hourly", utc(2026, 1, 1, 10, 0), utc(2026, 1, 1, 11, 0)),
    ("@daily", utc(2026, 1, 1, 10, 0), utc(2026, 1, 2)),
    ("@midnight", utc(2026, 1, 1, 10, 0), utc(2026, 1, 2)),
    ("@weekly", utc(2026, 1, 1), utc(2026, 1, 4)),  # the next Sunday
    ("@monthly", utc(2026, 1, 15), utc(2026, 2, 1)),
    ("@yearly", utc(2026, 1, 15), utc(2027, 1, 1)),
    ("@annually", utc(2026, 1, 15), utc(2027, 1, 1)),
    ("@every 1h30m", utc(2026, 1, 1, 10, 0, 5), utc(2026, 1, 1, 11, 30, 5)),
])
def test_next_run(schedule: str, after: datetime, expected: datetime) -> None:
    assert parse_schedule(schedule).next(after) == expected


def test_time_zone_and_daylight_saving() -> None:
    berlin = parse_schedule("0 9 * * *", "Europe/Berlin")
    assert berlin.next(utc(2026, 1, 10, 12)) == utc(2026, 1, 11, 8)  # CET, UTC+1
    assert berlin.next(utc(2026, 7, 10, 12)) == utc(2026, 7, 11, 7)  # CEST, UTC+2
    # 02:30 does not exist in Berlin on 29 March 2026: that day has no run at that time.
    night = parse_schedule("30 2 * * *", "Europe/Berlin")
    assert night.next(utc(2026, 3, 28, 2)) != utc(2026, 3, 29, 1, 30)
    assert night.next(utc(2026, 3, 29, 6)) == utc(2026, 3, 30, 0, 30)


@pytest.mark.parametrize(("schedule", "message"), [
    ("* * *", "expected exactly 5 fields, found 3: [* * *]"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("0 0 L * *", 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'),
    ("0 0 * * 1#2", 'failed to parse int from 1#2: strconv.Atoi: parsing "1#2": invalid syntax'),
    ("@every soon", 'failed to parse duration soon: time: invalid duration "soon"'),
])
def test_schedules_robfig_rejects(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_schedule(schedule)
    assert str(err.value) == message


@pytest.mark.parametrize(("schedule", "message"), [
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 1-13 *", "end of range (13) above maximum (12): 1-13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("* * * foo *", 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
])
def test_out_of_range_fields_are_rejected_as_robfig_words_it(schedule: str, message: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_schedule(schedule)
    assert str(err.value) == message


def test_start_with_step_runs_to_the_end_of_the_field() -> None:
    sched = parse_schedule("5/15 * * * *")
    assert sched.next(utc(2026, 1, 1, 0, 50)) == utc(2026, 1, 1, 1, 5)


def test_unknown_time_zone() -> None:
    with pytest.raises(ScheduleError, match="unknown time zone Mars/Olympus"):
        parse_schedule("* * * * *", "Mars/Olympus")


def test_most_recent_run_and_missed_counts() -> None:
    minutely = parse_schedule("* * * * *")
    start = utc(2026, 1, 1, 10, 0)
    assert most_recent_schedule_time(minutely, earliest=start, now=start + timedelta(seconds=30)) == (
        start, None, Missed.NONE)
    assert most_recent_schedule_time(minutely, earliest=start, now=start + timedelta(seconds=90)) == (
        start, utc(2026, 1, 1, 10, 1), Missed.NONE)
    _, recent, missed = most_recent_schedule_time(minutely, earliest=start, now=utc(2026, 1, 1, 10, 5, 10))
    assert (recent, missed) == (utc(2026, 1, 1, 10, 5), Missed.FEW)
    _, recent, missed = most_recent_schedule_time(minutely, earliest=start, now=utc(2026, 1, 1, 12, 0, 10))
    assert (recent, missed) == (utc(2026, 1, 1, 12, 0), Missed.MANY)


def test_irregular_schedule_finds_the_true_latest_run() -> None:
    sched = parse_schedule("30 6-16/4 * * 1-5")  # 06:30, 10:30, 14:30 on weekdays
    _, recent, _ = most_recent_schedule_time(sched, earliest=utc(2026, 1, 5), now=utc(2026, 1, 7, 12))
    assert recent == utc(2026, 1, 7, 10, 30)


def test_starting_deadline_bounds_what_is_due() -> None:
    hourly = parse_schedule("0 * * * *")
    earliest, now = utc(2026, 1, 1, 0, 0), utc(2026, 1, 1, 5, 10)
    assert next_schedule_time(hourly, earliest=earliest, now=now) == (utc(2026, 1, 1, 5), Missed.FEW)
    # 5:00 is 600 s ago: a 900 s deadline still starts it, a 300 s one finds nothing due.
    assert next_schedule_time(hourly, earliest=earliest, now=now, starting_deadline_seconds=900)[0] == utc(
        2026, 1, 1, 5)
    assert next_schedule_time(hourly, earliest=earliest, now=now, starting_deadline_seconds=300)[0] is None


def test_requeue_delay_points_at_the_next_run() -> None:
    minutely = parse_schedule("* * * * *")
    delay = next_schedule_delay(minutely, earliest=utc(2026, 1, 1, 10, 0), now=utc(2026, 1, 1, 10, 0, 20))
    assert delay == pytest.approx(40.1)
    delay = next_schedule_delay(minutely, earliest=utc(2026, 1, 1, 9, 0), now=utc(2026, 1, 1, 10, 0, 20))
    assert delay == pytest.approx(40.1)


def cronjob(**spec: Any) -> CronJob:
    return CronJob.model_validate({
        "metadata": {"name": "cj", "namespace": "ns", "uid": "cj-uid", "creationTimestamp": "2026-01-01T10:00:00Z"},
        "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Allow", "suspend": False,
                 "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                 "jobTemplate": {"metadata": {"labels": {"app": "x"}}, "spec": {"template": {"spec": {
                     "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}},
                 **spec},
        "status": {}})


def job(name: str, uid: str, *, finished: str | None = None, start: str | None = None,
        completion: str | None = None) -> Job:
    conditions = [{"type": finished, "status": "True"}] if finished else []
    return Job.model_validate({"metadata": {"name": name, "namespace": "ns", "uid": uid, "ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "CronJob", "name": "cj", "uid": "cj-uid", "controller": True}]},
        "status": {"conditions": conditions, "startTime": start, "completionTime": completion}})


def with_active(cj: CronJob, *jobs: Job) -> CronJob:
    cj.status.last_schedule_time = "2026-01-01T10:01:00Z"
    cj.status.active = [ObjectReference(name=j.metadata.name, namespace="ns", uid=j.metadata.uid) for j in jobs]
    return cj


NOW = utc(2026, 1, 1, 10, 2, 5)


def reasons(plan: Any) -> list[str]:
    return [reason for _, reason, _ in plan.events]


def test_allow_starts_the_run_due_alongside_a_running_job() -> None:
    running = job("cj-29454361", "j1")
    plan = plan_sync(with_active(cronjob(), running), [running], NOW)
    assert plan.create_at == utc(2026, 1, 1, 10, 2) and plan.replace == []
    assert plan.requeue_after == pytest.approx(55.1)


def test_forbid_skips_while_a_job_runs() -> None:
    running = job("cj-29454361", "j1")
    plan = plan_sync(with_active(cronjob(concurrencyPolicy="Forbid"), running), [running], NOW)
    assert plan.create_at is None and reasons(plan) == ["JobAlreadyActive"]


def test_replace_deletes_the_running_job_first() -> None:
    running = job("cj-29454361", "j1")
    plan = plan_sync(with_active(cronjob(concurrencyPolicy="Replace"), running), [running], NOW)
    assert plan.create_at == utc(2026, 1, 1, 10, 2) and [r.uid for r in plan.replace] == ["j1"]


def test_completed_job_leaves_active_and_sets_last_successful_time() -> None:
    done = job("cj-29454361", "j1", finished="Complete", completion="2026-01-01T10:01:30Z")
    plan = plan_sync(with_active(cronjob(concurrencyPolicy="Forbid"), done), [done], NOW)
    assert plan.cronjob.status.active == [] and plan.status_changed
    assert plan.cronjob.status.last_successful_time == "2026-01-01T10:01:30Z"
    assert reasons(plan) == ["SawCompletedJob"] and plan.create_at == utc(2026, 1, 1, 10, 2)


def test_missing_job_is_dropped_from_active() -> None:
    gone = job("cj-29454361", "j1")
    plan = plan_sync(with_active(cronjob(concurrencyPolicy="Forbid"), gone), [], NOW, missing={"j1"})
    assert plan.cronjob.status.active == [] and reasons(plan) == ["MissingJob"]


def test_suspended_and_already_started_runs_do_nothing() -> None:
    assert plan_sync(cronjob(suspend=True), [], NOW).create_at is None
    started = cronjob()
    started.status.last_schedule_time = "2026-01-01T10:02:00Z"
    plan = plan_sync(started, [], NOW)
    assert plan.create_at is None and plan.requeue_after == pytest.approx(55.1)


def test_too_late_for_the_starting_deadline() -> None:
    late = cronjob(schedule="0 * * * *", startingDeadlineSeconds=10)
    late.metadata.creation_timestamp = "2026-01-01T08:30:00Z"
    plan = plan_sync(late, [], utc(2026, 1, 1, 10, 0, 30))
    assert plan.create_at is None


def test_too_many_missed_runs_still_start_the_latest() -> None:
    old = cronjob()
    old.metadata.creation_timestamp = "2025-12-31T00:00:00Z"
    plan = plan_sync(old, [], NOW)
    assert plan.create_at == utc(2026, 1, 1, 10, 2) and reasons(plan) == ["TooManyMissedTimes"]


def test_unparseable_schedule_and_unknown_zone_are_reported() -> None:
    plan = plan_sync(cronjob(schedule="every day"), [], NOW)
    assert reasons(plan) == ["UnparseableSchedule"] and plan.requeue_after is None
    assert plan.events[0][2] == 'unparseable schedule: "every day" : expected exactly 5 fields, found 2: [every day]'
    assert reasons(plan_sync(cronjob(timeZone="Nowhere/Land"), [], NOW)) == ["UnknownTimeZone"]


def test_job_from_template() -> None:
    cj = cronjob(timeZone="Asia/Tokyo")
    made = job_from_template(cj, utc(2026, 1, 1, 10, 2), parse_schedule("* * * * *", "Asia/Tokyo").zone)
    assert made.metadata.name == job_name(cj, utc(2026, 1, 1, 10, 2)) == "cj-29454362"
    assert made.metadata.annotations == {CRONJOB_SCHEDULED_TIMESTAMP_ANNOTATION: "2026-01-01T19:02:00+09:00"}
    assert made.metadata.labels == {"app": "x"}
    owner = made.metadata.controller_ref()
    assert owner is not None and (owner.kind, owner.uid) == ("CronJob", "cj-uid")
    assert made.spec.template.spec.containers[0].image == "busybox"


def test_history_limits_delete_the_oldest_finished_jobs() -> None:
    jobs = [job(f"ok-{i}", f"s{i}", finished="Complete", start=f"2026-01-01T10:0{i}:00Z") for i in range(5)]
    jobs += [job(f"bad-{i}", f"f{i}", finished="Failed", start=f"2026-01-01T10:0{i}:00Z") for i in range(3)]
    jobs.append(job("running", "r", start="2026-01-01T09:00:00Z"))
    doomed = jobs_to_delete(cronjob(successfulJobsHistoryLimit=2, failedJobsHistoryLimit=0), jobs)
    assert [j.metadata.name for j in doomed] == ["ok-0", "ok-1", "ok-2", "bad-0", "bad-1", "bad-2"]
    assert jobs_to_delete(cronjob(), jobs[:3]) == []
