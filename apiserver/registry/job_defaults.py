"""Defaults of batch/v1 Jobs: pkg/apis/batch/v1 SetDefaults_Job.

Both parallelism and completions unset means one pod run once (both 1); parallelism alone
defaults to 1; backoffLimit 6; completionMode NonIndexed; suspend false; podReplacementPolicy
TerminatedOrFailed (Failed with a pod failure policy); an onPodConditions pattern's status
True; the Job takes its template's labels when it has none. The pod template is defaulted as
a pod spec. The generated selector is the strategy's (it needs the uid).
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.pod_defaults import default_pod_spec

__all__ = ["default_job"]

Obj = dict[str, Any]

DEFAULT_BACKOFF_LIMIT = 6


def default_job(obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", DEFAULT_BACKOFF_LIMIT)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    policy = spec.get("podFailurePolicy")
    for rule in (policy.get("rules") or []) if isinstance(policy, dict) else []:
        for pattern in (rule.get("onPodConditions") or []) if isinstance(rule, dict) else []:
            if isinstance(pattern, dict):
                pattern.setdefault("status", "True")
    spec.setdefault("podReplacementPolicy", "Failed" if policy is not None else "TerminatedOrFailed")
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template.get("metadata"), dict) else None
    meta = obj.get("metadata")
    if isinstance(labels, dict) and labels and isinstance(meta, dict) and not meta.get("labels"):
        meta["labels"] = dict(labels)
    if isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])
