"""The scheduler's view of the cluster: nodes with the pods placed on them, assumed pods included.

Mirrors kube-scheduler `internal/cache` (and `framework.NodeInfo`):
- `NodeInfo` is one node plus the pods counted against it and the sums of their requests;
- pods come from two sources. *Bound* pods arrive from the pod informer. *Assumed* pods are
  the scheduler's own decisions whose binding has not yet been confirmed by the watch: they
  are counted at once, so a burst of pods scheduled faster than the watch round-trips never
  over-commits a node;
- an assumed pod is confirmed when the informer reports it bound (to any node: the informer's
  node wins), and forgotten when its binding fails; a pod deleted from the API is removed
  whatever its state;
- terminal pods (Succeeded/Failed) no longer hold resources and are not counted;
- pods may name a node the cache does not know (yet, or any more): their NodeInfo is kept
  with `node is None` and is left out of `node_infos()` until the node appears.
The cache is plain, loop-local state: use it from one event loop. The scheduling cycle reads it
without awaiting, so for the duration of one cycle it is a consistent snapshot.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from kube.api import Node, Pod
from kube.podutil import is_pod_terminal
from scheduler.framework.images import normalized_image_name
from scheduler.framework.resource import (
    HostPort,
    Resource,
    node_allocatable,
    pod_host_ports,
    pod_non_zero_requests,
    pod_requests,
)

__all__ = ["NodeInfo", "PodInfo", "SchedulerCache", "is_terminal"]

logger = logging.getLogger(__name__)


def is_terminal(pod: Pod) -> bool:
    """True for a finished pod, which no longer holds node resources (kube.podutil.is_pod_terminal)."""
    return is_pod_terminal(pod)


@dataclass(frozen=True)
class PodInfo:
    """A pod counted on a node, with the requests and host ports it was counted with."""

    pod: Pod
    requests: Resource
    non_zero_requests: Resource
    host_ports: tuple[HostPort, ...] = ()

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        return cls(pod, pod_requests(pod), pod_non_zero_requests(pod), pod_host_ports(pod))


@dataclass
class NodeInfo:
    """A node and what is placed on it; read-only for plugins."""

    node: Node | None = None
    pods: dict[str, PodInfo] = field(default_factory=dict)
    requested: Resource = field(default_factory=Resource)
    non_zero_requested: Resource = field(default_factory=Resource)
    allocatable: Resource = field(default_factory=Resource)
    used_ports: Counter[HostPort] = field(default_factory=Counter)
    pods_with_affinity: dict[str, PodInfo] = field(default_factory=dict)
    """The pods with any pod (anti-)affinity terms: what InterPodAffinity must look at for others."""
    generation: int = 0
    # Derived from the node once per node update, read by plugins for every pod:
    name: str = ""
    ready: bool = False
    images: dict[str, int] = field(default_factory=dict)
    """Normalized image name -> size in bytes, from status.images."""

    @property
    def pod_count(self) -> int:
        return len(self.pods)

    def clone(self) -> NodeInfo:
        """A copy whose pods can be added and removed without touching this one (preemption trials)."""
        return NodeInfo(node=self.node, pods=dict(self.pods), requested=self.requested,
                        non_zero_requested=self.non_zero_requested, allocatable=self.allocatable,
                        used_ports=Counter(self.used_ports), pods_with_affinity=dict(self.pods_with_affinity),
                        generation=self.generation, name=self.name, ready=self.ready, images=self.images)

    def set_node(self, node: Node | None) -> None:
        self.node = node
        self.allocatable = node_allocatable(node) if node is not None else Resource()
        self.name = str(node.metadata.name) if node is not None else ""
        self.ready = node is not None and node.is_ready()
        images = (node.status.images or []) if node is not None else []
        self.images = {normalized_image_name(n): image.size_bytes or 0 for image in images for n in image.names or []}
        self.generation += 1

    def add_pod(self, info: PodInfo) -> None:
        key = info.pod.key
        if key in self.pods:
            self.remove_pod(key)
        self.pods[key] = info
        self.requested = self.requested + info.requests
        self.non_zero_requested = self.non_zero_requested + info.non_zero_requests
        self.used_ports.update(info.host_ports)
        affinity = info.pod.spec.affinity
        if affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None):
            self.pods_with_affinity[key] = info
        self.generation += 1

    def remove_pod(self, key: str) -> bool:
        info = self.pods.pop(key, None)
        if info is None:
            return False
        self.requested = self.requested - info.requests
        self.non_zero_requested = self.non_zero_requested - info.non_zero_requests
        self.used_ports.subtract(info.host_ports)
        self.pods_with_affinity.pop(key, None)
        self.used_ports += Counter()  # drop ports no pod uses any more
        self.generation += 1
        return True


@dataclass
class _PodState:
    node_name: str
    assumed: bool
    binding_finished: bool = False


class SchedulerCache:
    """Nodes and the pods counted on them, bound or assumed."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        self._node_list: list[NodeInfo] | None = None  # sorted known nodes; rebuilt when the set changes

    # --- nodes ---------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        """Add or update a node (idempotent)."""
        info = self._nodes.setdefault(str(node.metadata.name), NodeInfo())
        if info.node is None:
            self._node_list = None
        info.set_node(node)

    update_node = add_node

    def remove_node(self, name: str) -> None:
        """Forget a node; pods still naming it stay counted until they are removed."""
        info = self._nodes.get(name)
        if info is None:
            return
        self._node_list = None
        if info.pods:
            info.set_node(None)
        else:
            del self._nodes[name]

    def node_info(self, name: str) -> NodeInfo | None:
        info = self._nodes.get(name)
        return info if info is not None and info.node is not None else None

    def node_infos(self) -> list[NodeInfo]:
        """Every known node, sorted by name (a stable order for sampling and tie-breaks).

        The list is shared between calls and changes only when nodes come or go: do not mutate it.
        """
        if self._node_list is None:
            self._node_list = sorted((i for i in self._nodes.values() if i.node is not None), key=lambda i: i.name)
        return self._node_list

    # --- pods ----------------------------------------------------------------------------
    def _place(self, pod: Pod, node_name: str) -> None:
        self._nodes.setdefault(node_name, NodeInfo()).add_pod(PodInfo.of(pod))

    def _unplace(self, key: str, node_name: str) -> None:
        info = self._nodes.get(node_name)
        if info is not None and info.remove_pod(key) and info.node is None and not info.pods:
            del self._nodes[node_name]

    def assume_pod(self, pod: Pod, node_name: str) -> None:
        """Count `pod` on `node_name` before the API confirms it; raise ValueError if already counted."""
        key = pod.key
        if key in self._pods:
            raise ValueError(f"pod {key} is already in the scheduler cache")
        self._place(pod, node_name)
        self._pods[key] = _PodState(node_name, assumed=True)

    def finish_binding(self, key: str) -> None:
        """The binding of an assumed pod succeeded; it stays counted until the watch confirms it."""
        state = self._pods.get(key)
        if state is not None and state.assumed:
            state.binding_finished = True

    def forget_pod(self, key: str) -> None:
        """Undo an assumption (its binding failed); a pod already confirmed is left alone."""
        state = self._pods.get(key)
        if state is None or not state.assumed:
            return
        self._unplace(key, state.node_name)
        del self._pods[key]

    def is_assumed(self, key: str) -> bool:
        state = self._pods.get(key)
        return state is not None and state.assumed

    def add_pod(self, pod: Pod) -> None:
        """A bound pod seen by the informer: confirm the assumption, or start counting it.

        Terminal pods are removed instead; unbound pods are ignored (an assumption stays).
        Idempotent; the latest object replaces any older one.
        """
        key, node_name = pod.key, pod.spec.node_name
        if not node_name:
            return
        if is_terminal(pod):
            self.remove_pod(key)
            return
        state = self._pods.get(key)
        if state is not None:
            if state.assumed and state.node_name != node_name:
                logger.warning("Pod was bound to a different node than assumed",
                               extra={"pod": key, "assumed": state.node_name, "node": node_name})
            self._unplace(key, state.node_name)
        self._place(pod, node_name)
        self._pods[key] = _PodState(node_name, assumed=False)

    update_pod = add_pod

    def remove_pod(self, key: str) -> bool:
        """Stop counting the pod (deleted, or terminal); return whether it was counted."""
        state = self._pods.pop(key, None)
        if state is None:
            return False
        self._unplace(key, state.node_name)
        return True

    def counts(self) -> tuple[int, int]:
        """(nodes, pods) currently known: for logs and tests."""
        return len(self.node_infos()), len(self._pods)
