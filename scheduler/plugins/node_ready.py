"""NodeReady: only place pods on nodes whose `Ready` condition is `True`.

Upstream expresses this with the `node.kubernetes.io/not-ready` and `.../unreachable`
NoSchedule taints that the node lifecycle controller adds, checked by TaintToleration.
picokube checks the condition directly, which needs no controller to be running; a pod
tolerating the not-ready taint (as DaemonSet pods do) is let through, as upstream would.
A node with no Ready condition yet (a kubelet that has not reported) is not ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube.api import Pod, Taint
from kube.taints import TAINT_NODE_NOT_READY, tolerations_tolerate_taint
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status

__all__ = ["ERR_REASON_NOT_READY", "NAME", "NodeReady"]

NAME = "NodeReady"
ERR_REASON_NOT_READY = "node(s) were not ready"

_TAINT = Taint(key=TAINT_NODE_NOT_READY, effect="NoSchedule")


class NodeReady:
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.ready:
            return None
        if tolerations_tolerate_taint(pod.spec.tolerations, _TAINT):
            return None
        return Status.unresolvable(ERR_REASON_NOT_READY, plugin=NAME)


def new(args: Mapping[str, Any]) -> NodeReady:
    return NodeReady()
