"""The CronJob controller (pkg/controller/cronjob)."""

from controllers.cronjob.controller import CronJobController

__all__ = ["CronJobController"]
