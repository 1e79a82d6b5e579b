"""Why a pod fits no node: the per-node statuses and Kubernetes' one-line summary of them.

Mirrors kube-scheduler `framework.Diagnosis` and `FitError.Error()`. The summary counts each
reason over the nodes that gave it and sorts the "<count> <reason>" strings, exactly as
upstream does, so users (and tests written against real clusters) read the same text:

    0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.

A node rejected for several reasons at once ("Insufficient cpu", "Insufficient memory")
counts under each of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from scheduler.framework.interfaces import PostFilterResult, Status

__all__ = ["Diagnosis", "FitError", "NO_NODES_AVAILABLE"]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class Diagnosis:
    """What the filters said: node name -> rejecting status, and which plugins rejected."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_message: str = ""
    post_filter_message: str = ""
    """What preemption concluded when it could not help (appended to the summary)."""

    def record(self, node: str, status: Status) -> None:
        self.node_to_status[node] = status
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node can run the pod; `str()` is the summary message."""

    def __init__(self, *, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis,
                 nomination: PostFilterResult | None = None) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        self.nomination = nomination
        """Set when preemption found a node: evict `victims`, then the pod fits there."""
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if self.num_all_nodes == 0:
            return NO_NODES_AVAILABLE
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.diagnosis.pre_filter_message:
            # Every node carries the PreFilter status then; counting it per node would repeat it.
            msg += f" {self.diagnosis.pre_filter_message}."
        else:
            histogram: Counter[str] = Counter()
            for status in self.diagnosis.node_to_status.values():
                histogram.update(status.reasons)
            if histogram:
                msg += " " + ", ".join(sorted(f"{n} {reason}" for reason, n in histogram.items())) + "."
        if self.diagnosis.post_filter_message:
            msg += " " + self.diagnosis.post_filter_message
        return msg
