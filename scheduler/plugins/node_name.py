"""NodeName: a pod that names its node (`spec.nodeName`) fits only that node.

Mirrors kube-scheduler `plugins/nodename`. Pods with a node name are normally never pending
(they are bound already), so this matters only to callers that run the framework for such a
pod, such as a future preemption dry run; it is kept because it costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status

__all__ = ["NodeName", "NAME", "ERR_REASON"]

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = pod.spec.node_name
        if not wanted or wanted == node_info.name:
            return None
        return Status.unresolvable(ERR_REASON, plugin=NAME)


def new(args: Mapping[str, Any]) -> NodeName:
    return NodeName()
