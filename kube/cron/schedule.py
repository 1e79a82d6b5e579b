"""Cron schedules as Kubernetes reads them, and which run of one is due.

A schedule is what robfig/cron's ParseStandard accepts: five fields (minute, hour,
day-of-month, month, day-of-week) with `*`, `?`, ranges, steps, lists and month/day names,
or a descriptor (`@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`,
`@hourly`, `@every <duration>`). Field schedules are evaluated by cronsim in the CronJob's
time zone (UTC when none), so daylight-saving changes follow the zone's rules; `@every` is a
fixed delay. `parse_schedule` raises `ScheduleError` with robfig's wording where it has one.

`most_recent_schedule_time` and `next_schedule_delay` are upstream's utils.go: the run due
now is the latest schedule time after the last one (or the CronJob's creation) that is not
in the future, bounded below by startingDeadlineSeconds; the number of missed runs is
estimated from the interval between two runs, as upstream does, and more than 100 is
reported as "many".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import Enum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from kube.cron.fields import FieldSyntaxError, check_fields
from kube.duration import parse_go_duration

__all__ = ["Schedule", "ScheduleError", "Missed", "parse_schedule", "load_time_zone",
           "most_recent_schedule_time", "next_schedule_time", "next_schedule_delay", "NEXT_SCHEDULE_DELTA"]

NEXT_SCHEDULE_DELTA = 0.1
"""Seconds added to a requeue, so a slightly early wake-up still finds its run due (upstream nextScheduleDelta)."""

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}


class ScheduleError(ValueError):
    """A schedule robfig/cron would not parse; the message is the one it would give."""


class Missed(Enum):
    NONE = "none"
    FEW = "few"
    MANY = "many"


def _go_duration(text: str) -> float:
    """Seconds of a Go duration (`1h30m`, `90s`, `1.5h`), as time.ParseDuration reads it."""
    try:
        return parse_go_duration(text)
    except ValueError:
        raise ScheduleError(f'failed to parse duration {text}: time: invalid duration "{text}"') from None


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule in a time zone; `next(t)` is the first run strictly after `t`."""

    expression: str
    """The five cron fields, or empty for an `@every` schedule."""
    every: float
    """The delay of an `@every` schedule in whole seconds (at least 1), else 0."""
    zone: tzinfo

    def next(self, after: datetime) -> datetime:
        after = after.astimezone(UTC)
        if self.every:
            return after.replace(microsecond=0) + timedelta(seconds=self.every)
        local = after.astimezone(self.zone)
        return next(CronSim(self.expression, local)).astimezone(UTC)


def load_time_zone(name: str | None) -> tzinfo:
    """The zone of a CronJob's spec.timeZone (UTC when unset); ScheduleError names an unknown one."""
    if name is None:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown time zone {name}") from exc


def parse_schedule(schedule: str, time_zone: str | None = None) -> Schedule:
    """Parse as cron.ParseStandard does; `time_zone` is the CronJob's spec.timeZone."""
    zone = load_time_zone(time_zone)
    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        head, _, text = text.partition(" ")
        zone = load_time_zone(head.split("=", 1)[1])
        text = text.strip()
    if not text:
        raise ScheduleError("empty spec string")
    if text.startswith("@"):
        if text.startswith("@every "):
            delay = _go_duration(text[len("@every "):].strip())
            return Schedule("", float(max(1, round(delay))), zone)
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {text}")
        text = _DESCRIPTORS[text]
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    try:
        check_fields(fields)
    except FieldSyntaxError as exc:
        raise ScheduleError(str(exc)) from exc
    expression = " ".join(f.replace("?", "*") for f in fields)
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as exc:
        raise ScheduleError(str(exc)) from exc
    return Schedule(expression, 0.0, zone)


def most_recent_schedule_time(schedule: Schedule, *, earliest: datetime, now: datetime,
                              starting_deadline_seconds: int | None = None,
                              ) -> tuple[datetime, datetime | None, Missed]:
    """(earliest time considered, the latest run due at `now` or None, how many were missed).

    `earliest` is status.lastScheduleTime, else the CronJob's creationTimestamp. Raises
    ScheduleError when two consecutive runs are under a second apart (an impossible date).
    """
    if starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=starting_deadline_seconds))
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1)
    if now < t1:
        return earliest, None, Missed.NONE
    if now < t2:
        return earliest, t1, Missed.NONE
    between = round((t2 - t1).total_seconds())
    if between < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    missed = int((now - t1).total_seconds()) // between + 1
    recent: datetime | None = None
    t = schedule.next(t1 + timedelta(seconds=(missed - 2) * between))
    while t <= now:
        recent = t
        t = schedule.next(t)
    return earliest, recent, Missed.MANY if missed > 100 else Missed.FEW


def next_schedule_time(schedule: Schedule, *, earliest: datetime, now: datetime,
                       starting_deadline_seconds: int | None = None) -> tuple[datetime | None, Missed]:
    """The unmet run to start now (None if none is due) and how many runs were missed."""
    _, recent, missed = most_recent_schedule_time(schedule, earliest=earliest, now=now,
                                                  starting_deadline_seconds=starting_deadline_seconds)
    return (recent if recent is not None and recent <= now else None), missed


def next_schedule_delay(schedule: Schedule, *, earliest: datetime, now: datetime) -> float:
    """Seconds until the run after the latest one due, plus NEXT_SCHEDULE_DELTA (nextScheduleTimeDuration)."""
    try:
        earliest, recent, missed = most_recent_schedule_time(schedule, earliest=earliest, now=now)
    except ScheduleError:
        recent, missed = now, Missed.NONE
    if recent is None:
        recent = earliest if missed is Missed.NONE else now
    return (schedule.next(recent) - now).total_seconds() + NEXT_SCHEDULE_DELTA
