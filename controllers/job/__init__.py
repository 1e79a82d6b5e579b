"""The Job controller (pkg/controller/job)."""

from controllers.job.controller import JobController

__all__ = ["JobController"]
