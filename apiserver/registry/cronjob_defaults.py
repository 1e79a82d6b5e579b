"""Defaults of batch/v1 CronJobs: pkg/apis/batch/v1 SetDefaults_CronJob.

concurrencyPolicy Allow, suspend false, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1;
the job template's spec is defaulted as a Job's (which defaults its pod template).
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.job_defaults import default_job

__all__ = ["default_cronjob"]

Obj = dict[str, Any]


def default_cronjob(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    template = spec.get("jobTemplate")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        # Defaulted as a Job without metadata, so the template's labels are not copied anywhere.
        default_job({"spec": template["spec"]})
