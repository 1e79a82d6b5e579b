"""NodeResourcesFit: the pod's cpu, memory and pod slot must fit what the node has left.

Mirrors kube-scheduler `plugins/noderesources` (Fit plus its scoring strategies):
- PreFilter computes the pod's requests once per cycle (containers summed, raised to the
  largest init container, plus overhead) and stores them in the CycleState;
- Filter rejects a node whose allocatable minus what is already requested (bound *and*
  assumed pods) cannot hold the pod, with one reason per missing resource: "Too many pods",
  "Insufficient cpu", "Insufficient memory", "Insufficient example.com/gpu" (extended
  resources a node does not list count as 0). Every pod needs a pod slot, even one that
  requests nothing;
- Score `LeastAllocated` (the default) favours the node with the most free cpu and memory
  after placing the pod: the mean of the free percentages, on non-zero requests, so pods
  spread; `MostAllocated` is its mirror image, for bin packing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_SCORE, Status
from scheduler.framework.resource import Resource, pod_non_zero_requests, pod_requests

__all__ = ["NodeResourcesFit", "NAME", "LEAST_ALLOCATED", "MOST_ALLOCATED"]

NAME = "NodeResourcesFit"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
_STATE_KEY = "PreFilter" + NAME


def _least_allocated(requested: int, capacity: int) -> int:
    if capacity <= 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_SCORE // capacity


def _most_allocated(requested: int, capacity: int) -> int:
    if capacity <= 0:
        return 0
    return min(requested, capacity) * MAX_SCORE // capacity


class NodeResourcesFit:
    name = NAME

    def __init__(self, *, scoring_strategy: str = LEAST_ALLOCATED) -> None:
        if scoring_strategy not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            raise ValueError(f"{NAME}: unknown scoring strategy {scoring_strategy!r}")
        self._scorer = _least_allocated if scoring_strategy == LEAST_ALLOCATED else _most_allocated

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_STATE_KEY, (pod_requests(pod), pod_non_zero_requests(pod)))
        return None

    def _requests(self, state: CycleState, pod: Pod) -> tuple[Resource, Resource]:
        cached = state.get(_STATE_KEY)
        if cached is None:  # a caller that skipped PreFilter still gets the right answer
            cached = (pod_requests(pod), pod_non_zero_requests(pod))
            state.write(_STATE_KEY, cached)
        return cached  # type: ignore[no-any-return]

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        request, _ = self._requests(state, pod)
        reasons = insufficient_resources(request, node_info)
        return Status.unschedulable(*reasons, plugin=NAME) if reasons else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        _, non_zero = self._requests(state, pod)
        used, alloc = node_info.non_zero_requested, node_info.allocatable
        cpu = self._scorer(used.milli_cpu + non_zero.milli_cpu, alloc.milli_cpu)
        memory = self._scorer(used.memory + non_zero.memory, alloc.memory)
        return (cpu + memory) // 2


def insufficient_resources(request: Resource, node_info: NodeInfo) -> list[str]:
    """The reasons `request` (plus one pod) does not fit on the node; empty when it fits."""
    reasons: list[str] = []
    alloc, used = node_info.allocatable, node_info.requested
    if node_info.pod_count + 1 > alloc.pods:
        reasons.append("Too many pods")
    if request.milli_cpu > 0 and request.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        reasons.append("Insufficient cpu")
    if request.memory > 0 and request.memory > alloc.memory - used.memory:
        reasons.append("Insufficient memory")
    for name, amount in sorted(request.scalar.items()):
        if amount > alloc.scalar.get(name, 0) - used.scalar.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def new(args: Mapping[str, Any]) -> NodeResourcesFit:
    strategy = (args.get("scoringStrategy") or {}).get("type", LEAST_ALLOCATED)
    return NodeResourcesFit(scoring_strategy=strategy)
