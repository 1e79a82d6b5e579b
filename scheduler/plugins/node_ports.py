"""NodePorts: a pod's hostPorts must be free on the node.

Mirrors kube-scheduler `plugins/nodeports`: two uses of a host port conflict when protocol
and port are equal and the host IPs overlap (equal, or either is 0.0.0.0, the default).
Pods counted on the node include assumed ones, so two pods asking for one port in a burst
land on different nodes. The reason is "node(s) didn't have free ports for the requested
pod ports"; preemption could free the port, so it is resolvable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status
from scheduler.framework.resource import HostPort, pod_host_ports

__all__ = ["NodePorts", "NAME", "ERR_REASON"]

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATE_KEY = "PreFilter" + NAME


def _conflict(a: HostPort, b: HostPort) -> bool:
    return a[1] == b[1] and a[2] == b[2] and (a[0] == b[0] or "0.0.0.0" in (a[0], b[0]))


class NodePorts:
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        ports = pod_host_ports(pod)
        state.write(_STATE_KEY, ports)
        return None if ports else Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted: tuple[HostPort, ...] | None = state.get(_STATE_KEY)
        if wanted is None:
            wanted = pod_host_ports(pod)
        if not wanted:
            return None
        used = node_info.used_ports
        if any(_conflict(w, u) for w in wanted for u in used):
            return Status.unschedulable(ERR_REASON, plugin=NAME)
        return None


def new(args: Mapping[str, Any]) -> NodePorts:
    return NodePorts()
