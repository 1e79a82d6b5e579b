"""The table printer of batch/v1 Jobs, as kubectl 1.30+ shows them.

Mirrors printJob of Kubernetes' pkg/printers/internalversion: `NAME STATUS COMPLETIONS
DURATION AGE` (+ `CONTAINERS IMAGES SELECTOR` with -o wide). STATUS is the first true of
Complete, Failed, then Terminating (being deleted), Suspended, FailureTarget,
SuccessCriteriaMet, else Running; COMPLETIONS is `succeeded/completions` (`n/1 of P` for a
work queue Job with parallelism P > 1); DURATION runs from startTime to completionTime, or
to now while unfinished. Cells never raise on a malformed object.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import (
    _AGE,
    _NAME,
    _WIDE_TEMPLATE,
    Column,
    Obj,
    Printer,
    _age,
    _condition_true,
    _name,
    _template_cells,
    _time,
)
from kube.humanize import human_duration

__all__ = ["JOB_PRINTERS", "job_status"]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def job_status(job: Obj) -> str:
    """The STATUS cell: the condition that says most about where the Job stands."""
    status = _dict(job.get("status"))
    for condition in ("Complete", "Failed"):
        if _condition_true(status, condition):
            return condition
    if _dict(job.get("metadata")).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _condition_true(status, condition):
            return condition
    return "Running"


def _completions(spec: Obj, status: Obj) -> str:
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    parallelism = spec.get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if isinstance(parallelism, int) and parallelism > 1 else f"{succeeded}/1"


def _duration(status: Obj, now: datetime) -> str:
    start = _time(status.get("startTime"))
    if start is None:
        return ""
    end = _time(status.get("completionTime")) or now
    return human_duration((end - start).total_seconds())


def _job_cells(job: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(job.get("spec")), _dict(job.get("status"))
    return [_name(job), job_status(job), _completions(spec, status), _duration(status, now), _age(job, now),
            *_template_cells(spec)]


JOB_PRINTERS: dict[str, Printer] = {
    "Job": Printer((_NAME, Column("Status", description="Status of the job."),
                    Column("Completions", description="The completion status of the job as "
                                                      "succeeded/completions."),
                    Column("Duration", description="Time required to complete the job."), _AGE, *_WIDE_TEMPLATE),
                   _job_cells),
}
