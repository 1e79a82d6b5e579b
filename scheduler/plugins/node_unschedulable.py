"""NodeUnschedulable: keep pods off nodes marked `spec.unschedulable` (cordoned).

Mirrors kube-scheduler `plugins/nodeunschedulable`: a pod that tolerates the
`node.kubernetes.io/unschedulable:NoSchedule` taint may still land there (that is how
DaemonSet pods reach cordoned nodes). Cordoning is the administrator's call, so evicting
other pods would not help: the status is UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube.api import Pod, Taint
from kube.taints import TAINT_NODE_UNSCHEDULABLE, tolerations_tolerate_taint
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NAME", "NodeUnschedulable"]

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")


class NodeUnschedulable:
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or not node.spec.unschedulable:
            return None
        if tolerations_tolerate_taint(pod.spec.tolerations, _TAINT):
            return None
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE, plugin=NAME)


def new(args: Mapping[str, Any]) -> NodeUnschedulable:
    return NodeUnschedulable()
