"""picokube's scheduler: watches pending pods, picks a node for each, and records a Binding."""

from scheduler.config import SchedulerConfig
from scheduler.scheduler import Scheduler

__all__ = ["Scheduler", "SchedulerConfig"]
