"""DefaultPreemption: when no node fits, find one where evicting lower-priority pods makes room.

Mirrors kube-scheduler `plugins/defaultpreemption` (without PodDisruptionBudgets):
- a pod with `preemptionPolicy: Never` never preempts; nor does one whose nominated node
  still has lower-priority pods terminating (it waits for them);
- only nodes rejected for resolvable reasons are candidates; on each, every pod of lower
  priority is removed from a copy of the node, and if the pod then passes the filters,
  victims are reprieved one by one, highest priority first, while it still fits;
- among candidates the winner has the lowest highest-victim priority, then the lowest sum of
  victim priorities, then the fewest victims, then the earliest name;
- the result names the node and the victims; the scheduler deletes them and sets
  `status.nominatedNodeName`. When nothing helps, the diagnosis gets upstream's summary
  ("preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.").
Pure: it only decides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.fit_error import Diagnosis
from scheduler.framework.interfaces import Code, PostFilterResult, Status

__all__ = ["DefaultPreemption", "NAME", "pod_priority"]

NAME = "DefaultPreemption"
NOT_HELPFUL = "Preemption is not helpful for scheduling."
NO_VICTIMS = "No preemption victims found for incoming pod."

RunFilters = Callable[[CycleState, Pod, NodeInfo], Status | None]


def pod_priority(pod: Pod) -> int:
    return pod.spec.priority or 0


def _summary(num_nodes: int, reasons: Counter[str]) -> str:
    parts = ", ".join(sorted(f"{n} {reason}" for reason, n in reasons.items()))
    return f"preemption: 0/{num_nodes} nodes are available: {parts}."


class DefaultPreemption:
    name = NAME

    def __init__(self) -> None:
        self.run_filters: RunFilters | None = None

    def bind_filters(self, run_filters: RunFilters) -> None:
        """The framework hands its Filter runner over once built (upstream's framework.Handle)."""
        self.run_filters = run_filters

    def post_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                    diagnosis: Diagnosis) -> PostFilterResult | None:
        if self.run_filters is None:
            return None
        if pod.spec.preemption_policy == "Never":
            diagnosis.post_filter_message = "preemption: not eligible due to preemptionPolicy=Never."
            return None
        if not self._eligible(pod, nodes):
            diagnosis.post_filter_message = "preemption: not eligible, nominated node is still freeing room."
            return None
        reasons: Counter[str] = Counter()
        best: tuple[tuple[int, int, int, str], PostFilterResult] | None = None
        for info in nodes:
            status = diagnosis.node_to_status.get(info.name)
            if status is None or status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                reasons[NOT_HELPFUL] += 1
                continue
            victims = self._victims_on(state, pod, info)
            if victims is None:
                reasons[NO_VICTIMS] += 1
                continue
            priorities = [pod_priority(v) for v in victims]
            rank = (max(priorities, default=-(2 ** 31)), sum(priorities), len(victims), info.name)
            if best is None or rank < best[0]:
                best = (rank, PostFilterResult(info.name, tuple(victims)))
        if best is None:
            diagnosis.post_filter_message = _summary(len(nodes), reasons)
            return None
        return best[1]

    def _eligible(self, pod: Pod, nodes: Sequence[NodeInfo]) -> bool:
        nominated = pod.status.nominated_node_name
        if not nominated:
            return True
        info = next((n for n in nodes if n.name == nominated), None)
        if info is None:
            return True
        mine = pod_priority(pod)
        return not any(p.pod.metadata.deletion_timestamp is not None and pod_priority(p.pod) < mine
                       for p in info.pods.values())

    def _victims_on(self, state: CycleState, pod: Pod, info: NodeInfo) -> list[Pod] | None:
        """The fewest lower-priority pods whose removal lets `pod` pass the filters on `info`."""
        assert self.run_filters is not None
        mine = pod_priority(pod)
        lower = [p for p in info.pods.values()
                 if pod_priority(p.pod) < mine and p.pod.metadata.deletion_timestamp is None]
        if not lower:
            return None
        trial = info.clone()
        for p in lower:
            trial.remove_pod(p.pod.key)
        if self.run_filters(state, pod, trial) is not None:
            return None
        victims: list[Pod] = []
        # Reprieve the most important first: they are the last we want to evict.
        for p in sorted(lower, key=lambda p: (-pod_priority(p.pod), p.pod.metadata.creation_timestamp or "")):
            trial.add_pod(p)
            if self.run_filters(state, pod, trial) is not None:
                trial.remove_pod(p.pod.key)
                victims.append(p.pod)
        return victims


def new(args: Mapping[str, Any]) -> DefaultPreemption:
    return DefaultPreemption()
