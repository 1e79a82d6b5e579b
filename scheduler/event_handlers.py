"""Informer handlers: keep the cache in step with the API and feed the scheduling queue.

Mirrors kube-scheduler `eventhandlers.go`. Handlers run on the event loop, never block, and
only touch loop-local state:
- a *pending* pod (no `spec.nodeName`, not being deleted, not finished, our scheduler name)
  is queued; an update of a pod already known to be unschedulable is queued again only
  when something besides its status changed, so our own condition write does not bypass
  the backoff;
- a *bound* pod is counted in the cache (confirming an assumption); a deleted or finished one
  is uncounted, and every unschedulable pod is retried because room was freed;
- a node added, or changed in a way that can change a verdict (allocatable, labels, taints,
  `unschedulable`, condition statuses — not heartbeats), retries every unschedulable pod.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from kube.api import Node, Pod
from scheduler.cache import SchedulerCache, is_terminal
from scheduler.config import DEFAULT_SCHEDULER_NAME
from scheduler.queue import SchedulingQueue

__all__ = ["ClusterEventHandlers", "is_pending_for", "node_scheduling_properties_changed"]


def is_pending_for(pod: Pod, scheduler_names: str | AbstractSet[str]) -> bool:
    """True when `pod` waits for a node and one of `scheduler_names` (profiles) is responsible for it."""
    names = {scheduler_names} if isinstance(scheduler_names, str) else scheduler_names
    return (not pod.spec.node_name and not pod.metadata.deletion_timestamp and not is_terminal(pod)
            and (pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) in names)


def _conditions(node: Node) -> dict[str, str]:
    return {c.type: c.status for c in node.status.conditions or []}


def node_scheduling_properties_changed(old: Node, new: Node) -> bool:
    return (old.spec.unschedulable != new.spec.unschedulable or old.spec.taints != new.spec.taints
            or old.metadata.labels != new.metadata.labels or old.status.allocatable != new.status.allocatable
            or _conditions(old) != _conditions(new))


def _only_status_changed(old: Pod, new: Pod) -> bool:
    return (old.spec == new.spec and old.metadata.labels == new.metadata.labels
            and old.metadata.annotations == new.metadata.annotations)


class ClusterEventHandlers:
    """The pod and node handlers of one scheduler; register with `EventHandler(on_add=...)`."""

    def __init__(self, *, cache: SchedulerCache, queue: SchedulingQueue,
                 scheduler_name: str | AbstractSet[str]) -> None:
        self.cache, self.queue = cache, queue
        self.scheduler_name = frozenset([scheduler_name]) if isinstance(scheduler_name, str) else scheduler_name

    # --- pods ----------------------------------------------------------------------------
    def on_pod_add(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.add_pod(pod)
        elif is_pending_for(pod, self.scheduler_name):
            self.queue.add(pod.key, pod.spec.priority or 0)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        key = new.key
        if new.spec.node_name:
            self.cache.update_pod(new)
            if not old.spec.node_name:
                self.queue.forget(key)  # bound, by us or by someone else
            if is_terminal(new) and not is_terminal(old):
                self.queue.move_all_to_active("AssignedPodTerminated")
        elif is_pending_for(new, self.scheduler_name):
            if not (self.queue.is_unschedulable(key) and _only_status_changed(old, new)):
                self.queue.add(key, new.spec.priority or 0)
        else:
            self.queue.forget(key)

    def on_pod_delete(self, pod: Pod) -> None:
        self.queue.forget(pod.key)
        if self.cache.remove_pod(pod.key):
            self.queue.move_all_to_active("AssignedPodDeleted")

    # --- nodes ---------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active("NodeAdded")

    def on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        if node_scheduling_properties_changed(old, new):
            self.queue.move_all_to_active("NodeUpdated")

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(str(node.metadata.name))
