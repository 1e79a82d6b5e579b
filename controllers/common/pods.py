"""Which pods a controller counts as its replicas: the active ones.

Mirrors pkg/controller.IsPodActive: a pod is active while it may still run, that is, it is
not terminating (no deletionTimestamp) and not finished (kube.podutil.is_pod_terminal).
Readiness and availability are shared by every component and live in kube.podutil.
"""

from __future__ import annotations

from kube.api import Pod
from kube.podutil import is_pod_terminal

__all__ = ["is_pod_active"]


def is_pod_active(pod: Pod) -> bool:
    """True for a pod that is neither terminating nor finished."""
    return pod.metadata.deletion_timestamp is None and not is_pod_terminal(pod)
