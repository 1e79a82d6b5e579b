"""NodeResourcesBalancedAllocation: prefer nodes whose cpu and memory would be used evenly.

Mirrors kube-scheduler `plugins/noderesources/balanced_allocation.go`: with the pod placed,
take the requested fraction of allocatable for cpu and memory (non-zero requests, each
capped at 1); the score is (1 - standard deviation of the fractions) * 100, which for two
resources is (1 - |cpu - memory| / 2) * 100. A node that would be half cpu-full and half
memory-full scores 100; one that fills cpu while memory stays idle scores less.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_SCORE, Status
from scheduler.framework.resource import Resource, pod_non_zero_requests

__all__ = ["BalancedAllocation", "NAME"]

NAME = "NodeResourcesBalancedAllocation"
_STATE_KEY = "PreScore" + NAME


def _fraction(requested: int, allocatable: int) -> float:
    return 1.0 if allocatable <= 0 else min(1.0, requested / allocatable)


class BalancedAllocation:
    name = NAME

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_STATE_KEY, pod_non_zero_requests(pod))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request: Resource = state.get(_STATE_KEY) or pod_non_zero_requests(pod)
        used, alloc = node_info.non_zero_requested, node_info.allocatable
        cpu = _fraction(used.milli_cpu + request.milli_cpu, alloc.milli_cpu)
        memory = _fraction(used.memory + request.memory, alloc.memory)
        std = abs(cpu - memory) / 2
        return int((1 - std) * MAX_SCORE)


def new(args: Mapping[str, Any]) -> BalancedAllocation:
    return BalancedAllocation()
