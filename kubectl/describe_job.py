"""`pkctl describe job`: kubectl's layout of a Job (pkg/describe DescribeJob, in part).

Selector, labels and annotations, parallelism, completions, completion mode, suspend, backoff
limit, the TTL after finishing and the active deadline when set, start and completion times
with the duration between them, the pod counts (`N Active (R Ready) / S Succeeded / F
Failed`), completed indexes of an Indexed Job, then the pod template (drawn by the caller).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kube.humanize import human_duration
from kube.timeutil import parse_time
from kubectl.describe_text import Section

__all__ = ["describe_job"]

Obj = dict[str, Any]


def _selector(sel: Any) -> str:
    labels = (sel or {}).get("matchLabels") if isinstance(sel, dict) else None
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _duration(status: Obj) -> str | None:
    start = parse_time(status.get("startTime")) if status.get("startTime") else None
    if start is None:
        return None
    end = parse_time(status.get("completionTime")) if status.get("completionTime") else None
    return human_duration(((end or datetime.now(UTC)) - start).total_seconds())


def describe_job(s: Section, job: Obj, *, template: Callable[[Section, Obj], None]) -> None:
    meta, spec, st = job.get("metadata") or {}, job.get("spec") or {}, job.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("Selector", _selector(spec.get("selector")))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", meta.get("annotations"), sep=": ")
    s.field("Parallelism", spec.get("parallelism", 1))
    s.field("Completions", spec.get("completions") if spec.get("completions") is not None else "<unset>")
    s.field("Completion Mode", spec.get("completionMode") or "NonIndexed")
    s.field("Suspend", str(bool(spec.get("suspend"))).lower())
    s.field("Backoff Limit", spec.get("backoffLimit", 6))
    if spec.get("ttlSecondsAfterFinished") is not None:
        s.field("TTL Seconds After Finished", spec["ttlSecondsAfterFinished"])
    if st.get("startTime"):
        s.field("Start Time", st["startTime"])
    if st.get("completionTime"):
        s.field("Completed At", st["completionTime"])
    if (duration := _duration(st)) is not None:
        s.field("Duration", duration)
    if spec.get("activeDeadlineSeconds") is not None:
        s.field("Active Deadline Seconds", f"{spec['activeDeadlineSeconds']}s")
    s.field("Pods Statuses", f"{st.get('active', 0)} Active ({st.get('ready', 0)} Ready) / "
                             f"{st.get('succeeded', 0)} Succeeded / {st.get('failed', 0)} Failed")
    if spec.get("completionMode") == "Indexed":
        s.field("Completed Indexes", st.get("completedIndexes") or "<none>")
    template(s, spec.get("template") or {})
