"""The kinds the ReplicaSet controller's logic manages: ReplicaSets and ReplicationControllers.

Upstream runs its replication manager as the ReplicaSet controller behind a conversion
adapter (pkg/controller/replication). Here the two kinds share one reconciler directly: their
specs and statuses have the same fields, except the selector, which `managed_selector`
reads from either (a LabelSelector, or a ReplicationController's plain label map in which
every pair must match). A `ManagedKind` names what differs per kind: the model, the
controller's name, and the component its events are reported by.
"""

from __future__ import annotations

from dataclasses import dataclass

from controllers.common import selector_of
from kube.api import ReplicaSet, ReplicationController
from kube.selectors import LabelSelector, selector_from_label_selector

__all__ = ["REPLICATION_CONTROLLER", "REPLICA_SET", "Managed", "ManagedKind", "managed_selector"]

Managed = ReplicaSet | ReplicationController
"""An object whose pods the ReplicaSet logic keeps at spec.replicas."""


@dataclass(frozen=True)
class ManagedKind:
    model: type[Managed]
    name: str
    """The controller's name (queue, metrics, field manager `<name>-controller`)."""
    component: str
    """The component events are reported by."""

    @property
    def kind(self) -> str:
        return self.model.info.kind


REPLICA_SET = ManagedKind(ReplicaSet, "replicaset", "replicaset-controller")
REPLICATION_CONTROLLER = ManagedKind(ReplicationController, "replicationcontroller", "replication-controller")


def managed_selector(obj: Managed) -> LabelSelector | None:
    """The pods `obj` selects; None when its selector is empty or invalid (it selects nothing)."""
    if isinstance(obj, ReplicaSet):
        return selector_of(obj.spec.selector)
    if not obj.spec.selector:
        return None
    try:
        return selector_from_label_selector({"matchLabels": obj.spec.selector})
    except (ValueError, KeyError):
        return None
