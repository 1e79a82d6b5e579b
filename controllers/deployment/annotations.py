"""The deployment.kubernetes.io annotations a Deployment writes on its ReplicaSets.

Mirrors deployment/util SetNewReplicaSetAnnotations / SetReplicasAnnotations:
- `revision`: the rollout number; a ReplicaSet that becomes the new one again (a rollback
  to an older template) gets the next revision, so the highest revision is always current;
- `desired-replicas` and `max-replicas` (spec.replicas + maxSurge): what the Deployment
  asked for when it last scaled the ReplicaSet;
- the Deployment's own annotations are copied, except kubectl's last-applied configuration
  and these controller-owned keys.
"""

from __future__ import annotations

from controllers.deployment.fenceposts import desired_replicas, max_surge
from kube.api import Deployment, KubeObject, ReplicaSet
from kube.tracing import TRACE_ANNOTATION

__all__ = [
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "REVISION_ANNOTATION",
    "max_revision",
    "new_replicaset_annotations",
    "replicas_annotations",
    "revision",
]

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
_NOT_COPIED = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration", TRACE_ANNOTATION, REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION,
    "deprecated.deployment.rollback.to",
})


def revision(obj: KubeObject) -> int:
    """The object's revision annotation as a number (0 when missing or malformed)."""
    try:
        return int((obj.metadata.annotations or {}).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def max_revision(replicasets: list[ReplicaSet]) -> int:
    return max((revision(rs) for rs in replicasets), default=0)


def replicas_annotations(d: Deployment) -> dict[str, str]:
    want = desired_replicas(d)
    return {DESIRED_REPLICAS_ANNOTATION: str(want), MAX_REPLICAS_ANNOTATION: str(want + max_surge(d))}


def new_replicaset_annotations(d: Deployment, *, rev: int) -> dict[str, str]:
    """Every annotation the new ReplicaSet of `d` should carry at revision `rev`."""
    copied = {k: v for k, v in (d.metadata.annotations or {}).items() if k not in _NOT_COPIED}
    return {**copied, **replicas_annotations(d), REVISION_ANNOTATION: str(rev)}
