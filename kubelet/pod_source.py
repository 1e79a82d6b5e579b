"""The pods bound to a node, from one pod informer shared by any number of nodes.

A real kubelet watches `fieldSelector=spec.nodeName=<node>`; a process hosting many hollow
nodes watches every bound pod once and routes each event to the node it names. `PodRouter`
owns that routing (one dict lookup per event, whatever the number of nodes) and hands each
kubelet a `NodePods`: `get` and `list` see only that node's pods, and the node's callback is
called for its pods' adds, updates and deletes. A pod that moves between nodes (never, for
bound pods) would be reported to both.
"""

from __future__ import annotations

from collections.abc import Callable

from kube.api import Pod
from kube.cache import EventHandler, SharedInformer

__all__ = ["PodRouter", "NodePods", "NODE_NAME_INDEX"]

NODE_NAME_INDEX = "spec.nodeName"


def _node_of(pod: Pod) -> list[str]:
    return [pod.spec.node_name] if pod.spec.node_name else []


class NodePods:
    """One node's view of the shared pod store."""

    def __init__(self, informer: SharedInformer[Pod], node_name: str) -> None:
        self.informer, self.node_name = informer, node_name

    def get(self, key: str) -> Pod | None:
        pod = self.informer.store.get(key)
        return pod if pod is not None and pod.spec.node_name == self.node_name else None

    def list(self) -> list[Pod]:
        return self.informer.store.by_index(NODE_NAME_INDEX, self.node_name)

    def has_synced(self) -> bool:
        return self.informer.has_synced()


class PodRouter:
    """Dispatches one pod informer's events to per-node callbacks."""

    def __init__(self, informer: SharedInformer[Pod]) -> None:
        self.informer = informer
        self._callbacks: dict[str, Callable[[Pod], None]] = {}
        informer.add_indexers({NODE_NAME_INDEX: _node_of})
        informer.add_event_handler(EventHandler(on_add=self._route, on_update=self._route_update,
                                                on_delete=self._route))

    def register(self, node_name: str, on_change: Callable[[Pod], None]) -> NodePods:
        """Call `on_change(pod)` for every event of a pod bound to `node_name`."""
        self._callbacks[node_name] = on_change
        return NodePods(self.informer, node_name)

    def _route(self, pod: Pod) -> None:
        callback = self._callbacks.get(pod.spec.node_name or "")
        if callback is not None:
            callback(pod)

    def _route_update(self, old: Pod, new: Pod) -> None:
        if old.spec.node_name and old.spec.node_name != new.spec.node_name:
            self._route(old)
        self._route(new)
