"""`pkctl describe cronjob`: kubectl's layout of a CronJob (pkg/describe describeCronJob).

Schedule, concurrency policy, suspend, the history limits and starting deadline (`<unset>`
when absent), the job template's selector, parallelism, completions and active deadline,
its pod template (drawn by the caller), then the last schedule time (RFC 1123) and the
names of the active Jobs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from typing import Any

from kube.timeutil import parse_time
from kubectl.describe_text import Section

__all__ = ["describe_cronjob"]

Obj = dict[str, Any]


def _unset(value: Any, suffix: str = "") -> str:
    return "<unset>" if value is None else f"{value}{suffix}"


def _bool(value: Any) -> str:
    return "<unset>" if not isinstance(value, bool) else str(value)


def describe_cronjob(s: Section, cronjob: Obj, *, template: Callable[[Section, Obj], None]) -> None:
    meta, spec, st = cronjob.get("metadata") or {}, cronjob.get("spec") or {}, cronjob.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("Schedule", spec.get("schedule"))
    if spec.get("timeZone") is not None:
        s.field("Time Zone", spec["timeZone"])
    s.field("Concurrency Policy", spec.get("concurrencyPolicy"))
    s.field("Suspend", _bool(spec.get("suspend")))
    s.field("Successful Job History Limit", _unset(spec.get("successfulJobsHistoryLimit")))
    s.field("Failed Job History Limit", _unset(spec.get("failedJobsHistoryLimit")))
    s.field("Starting Deadline Seconds", _unset(spec.get("startingDeadlineSeconds"), "s"))
    job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    selector = (job_spec.get("selector") or {}).get("matchLabels")
    s.field("Selector", ",".join(f"{k}={v}" for k, v in sorted(selector.items())) if selector else "<unset>")
    s.field("Parallelism", _unset(job_spec.get("parallelism")))
    s.field("Completions", _unset(job_spec.get("completions")))
    if job_spec.get("activeDeadlineSeconds") is not None:
        s.field("Active Deadline Seconds", f"{job_spec['activeDeadlineSeconds']}s")
    template(s, job_spec.get("template") or {})
    last = parse_time(st["lastScheduleTime"]) if st.get("lastScheduleTime") else None
    s.field("Last Schedule Time",
            last.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000") if last is not None else "<unset>")
    names = [str(r.get("name")) for r in st.get("active") or [] if isinstance(r, dict)]
    s.field("Active Jobs", ", ".join(names) or "<none>")
