"""Validation of batch/v1 CronJobs, worded as pkg/apis/batch/validation words it.

A CronJob's name is at most 52 characters (its Jobs append `-<minutes>`, 11 more, and a Job
name is a 63-character label); the schedule must parse as robfig/cron's ParseStandard and may
not carry `TZ=`/`CRON_TZ=` (unless the stored object already did: then not with timeZone
too); timeZone must be a real IANA name; startingDeadlineSeconds and the history limits are
non-negative; concurrencyPolicy is Allow, Forbid or Replace; the job template's spec is
validated as a Job's, with no selector of its own (the Job's is generated). Every error is
returned at once.
"""

from __future__ import annotations

import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apiserver.registry.job_validation import validate_job
from apiserver.validation.field import invalid, not_supported, required
from kube.api.batch_v1_cronjob import CONCURRENCY_POLICIES
from kube.cron.schedule import ScheduleError, parse_schedule
from kube.errors import FieldError

__all__ = ["validate_cronjob", "validate_cronjob_update", "MAX_CRONJOB_NAME_LENGTH"]

Obj = dict[str, Any]

MAX_CRONJOB_NAME_LENGTH = 52
_TZ_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _schedule(spec: Obj, old_spec: Obj | None) -> list[FieldError]:
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule:
        return [required("spec.schedule")]
    errs: list[FieldError] = []
    try:
        parse_schedule(schedule)
    except ScheduleError as exc:
        errs.append(invalid("spec.schedule", schedule, str(exc)))
    allow_tz = old_spec is not None and "TZ" in str(old_spec.get("schedule") or "")
    if allow_tz and "TZ" in schedule and spec.get("timeZone") is not None:
        errs.append(invalid("spec.schedule", schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in schedule:
        errs.append(invalid("spec.schedule", schedule,
                            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


def validate_time_zone(zone: Any) -> list[FieldError]:
    """validateTimeZone: nil, or an explicit IANA name the zone database knows."""
    if zone is None:
        return []
    path = "spec.timeZone"
    if not isinstance(zone, str) or not zone:
        return [invalid(path, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.match(part):
            return [invalid(path, zone, f"unknown time zone {zone}")]
    if zone.lower() == "local":
        return [invalid(path, zone, "timeZone must be an explicit time zone as defined in "
                                    "https://www.iana.org/time-zones")]
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return [invalid(path, zone, f"unknown time zone {zone}")]
    return []


def _job_template(spec: Obj) -> list[FieldError]:
    """ValidateJobTemplateSpec: the template's spec as a Job's; its selector is always generated."""
    jspec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
    prefix = "spec.jobTemplate.spec"
    errs: list[FieldError] = []
    for err in validate_job({"metadata": {}, "spec": {**jspec, "selector": None}}):
        if err.field.startswith("spec.selector"):
            continue  # the Job made from it gets a generated selector
        errs.append(FieldError(prefix + err.field[len("spec"):], err.message, reason=err.reason))
    if jspec.get("selector") is not None:
        errs.append(invalid(f"{prefix}.selector", jspec["selector"], "`selector` will be auto-generated"))
    if jspec.get("manualSelector") is True:
        errs.append(not_supported(f"{prefix}.manualSelector", True, ("nil", "false")))
    return errs


def _validate_spec(spec: Obj, old_spec: Obj | None) -> list[FieldError]:
    errs = _schedule(spec, old_spec)
    for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(invalid(f"spec.{field}", value, "must be greater than or equal to 0"))
    if old_spec is None or old_spec.get("timeZone") != spec.get("timeZone"):
        errs += validate_time_zone(spec.get("timeZone"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        errs.append(required("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    return errs + _job_template(spec)


def validate_cronjob(cronjob: Obj) -> list[FieldError]:
    """Every error in a new CronJob's spec and name (the rest of metadata is checked by the caller)."""
    errs = _validate_spec(_dict(cronjob.get("spec")), None)
    name = _dict(cronjob.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > MAX_CRONJOB_NAME_LENGTH:
        errs.append(invalid("metadata.name", name, f"must be no more than {MAX_CRONJOB_NAME_LENGTH} characters"))
    return errs


def validate_cronjob_update(new: Obj, old: Obj) -> list[FieldError]:
    """Every error in an updated CronJob (a TZ= schedule already stored may stay)."""
    return _validate_spec(_dict(new.get("spec")), _dict(old.get("spec")))
