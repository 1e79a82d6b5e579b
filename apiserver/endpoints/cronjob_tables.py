"""The table printer of batch/v1 CronJobs, as kubectl shows them.

Mirrors printCronJob of Kubernetes' pkg/printers/internalversion: `NAME SCHEDULE TIMEZONE
SUSPEND ACTIVE LAST SCHEDULE AGE` (+ `CONTAINERS IMAGES SELECTOR` of the job template with
-o wide). TIMEZONE and LAST SCHEDULE are `<none>` when unset, SUSPEND `<unset>`; ACTIVE counts
status.active. Cells never raise on a malformed object.
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
    _name,
    _since,
    _template_cells,
)

__all__ = ["CRONJOB_PRINTERS"]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _bool(value: Any) -> str:
    return "<unset>" if not isinstance(value, bool) else ("True" if value else "False")


def _cronjob_cells(cronjob: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(cronjob.get("spec")), _dict(cronjob.get("status"))
    active = status.get("active")
    last = status.get("lastScheduleTime")
    zone = spec.get("timeZone")
    return [_name(cronjob), str(spec.get("schedule") or ""), zone if isinstance(zone, str) else "<none>",
            _bool(spec.get("suspend")), len(active) if isinstance(active, list) else 0,
            _since(last, now) if last else "<none>", _age(cronjob, now),
            *_template_cells(_dict(_dict(spec.get("jobTemplate")).get("spec")))]


CRONJOB_PRINTERS: dict[str, Printer] = {
    "CronJob": Printer((_NAME, Column("Schedule", description="The schedule in Cron format."),
                        Column("Timezone", description="The time zone name for the given schedule."),
                        Column("Suspend", "boolean", description="Whether to suspend subsequent executions."),
                        Column("Active", "integer", description="A list of pointers to currently running jobs."),
                        Column("Last Schedule", description="Information when was the last time the job was "
                                                            "successfully scheduled."),
                        _AGE, *_WIDE_TEMPLATE), _cronjob_cells),
}
