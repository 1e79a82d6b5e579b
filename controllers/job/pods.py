"""What the Job controller reads from its pods: finished or not, and what a failure means.

Mirrors the pod predicates of pkg/controller/job (job_controller.go, pod_failure_policy.go):
- a pod *succeeded* or *failed* by its phase; a pod being deleted before it succeeded also
  counts as failed (its work is lost), unless its Job removed it on suspending or succeeding;
- with restartPolicy OnFailure the kubelet restarts failing containers in place, so their
  restarts (`restarts_on_failure`) count against backoffLimit as failed pods would;
- `match_failure_policy` applies spec.podFailurePolicy's rules in order to a failed pod and
  returns the first matching rule's action (FailJob, Ignore, Count) with upstream's message
  for FailJob, or None when no rule matches (the failure counts).
Pure functions over pod objects; safe anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from kube.api import Job, Pod
from kube.api.batch_v1 import JOB_TRACKING_FINALIZER, PodFailurePolicyRule

__all__ = ["FailurePolicyMatch", "has_tracking_finalizer", "is_finished", "is_pod_failed", "is_pod_succeeded",
           "match_failure_policy", "restarts_on_failure"]


def has_tracking_finalizer(pod: Pod) -> bool:
    return JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or [])


def is_pod_succeeded(pod: Pod) -> bool:
    return pod.status.phase == "Succeeded"


def is_pod_failed(pod: Pod) -> bool:
    return pod.status.phase == "Failed" or (pod.metadata.deletion_timestamp is not None and not is_pod_succeeded(pod))


def is_finished(pod: Pod) -> bool:
    """Terminal, or on its way out: either way no longer active."""
    return pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp is not None


def restarts_on_failure(job: Job, active: list[Pod]) -> int:
    """Container restarts of the active pods, when they count as failures (restartPolicy OnFailure)."""
    if job.spec.template.spec.restart_policy != "OnFailure":
        return 0
    return sum(status.restart_count for pod in active
               for status in [*(pod.status.init_container_statuses or []), *(pod.status.container_statuses or [])])


@dataclass(frozen=True)
class FailurePolicyMatch:
    action: str
    message: str


def _exit_code_match(rule: PodFailurePolicyRule, pod: Pod, index: int, key: str) -> FailurePolicyMatch | None:
    req = rule.on_exit_codes
    assert req is not None
    for status in pod.status.container_statuses or []:
        if req.container_name and status.name != req.container_name:
            continue
        terminated = status.state.terminated if status.state else None
        if terminated is None or terminated.exit_code == 0:
            continue
        inside = terminated.exit_code in req.values
        if inside == (req.operator == "In"):
            message = (f"Container {status.name} for pod {key} failed with exit code {terminated.exit_code} "
                       f"matching {rule.action} rule at index {index}")
            return FailurePolicyMatch(rule.action, message)
    return None


def _condition_match(rule: PodFailurePolicyRule, pod: Pod, index: int, key: str) -> FailurePolicyMatch | None:
    for pattern in rule.on_pod_conditions or []:
        for cond in pod.status.conditions or []:
            if cond.type == pattern.type and cond.status == (pattern.status or "True"):
                return FailurePolicyMatch(rule.action, f"Pod {key} has condition {cond.type} matching "
                                                       f"{rule.action} rule at index {index}")
    return None


def match_failure_policy(job: Job, pod: Pod) -> FailurePolicyMatch | None:
    """The first rule of the Job's podFailurePolicy matching this failed pod, or None."""
    policy = job.spec.pod_failure_policy
    if policy is None or pod.status.phase != "Failed":
        return None
    for index, rule in enumerate(policy.rules):
        if rule.on_exit_codes is not None:
            found = _exit_code_match(rule, pod, index, pod.key)
        else:
            found = _condition_match(rule, pod, index, pod.key)
        if found is not None:
            return found
    return None
