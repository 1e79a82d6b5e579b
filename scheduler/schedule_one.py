"""One scheduling decision: filter the nodes, score the feasible ones, pick the best.

Mirrors kube-scheduler `schedule_one.go` (`schedulePod`, `findNodesThatFitPod`,
`prioritizeNodes`, `selectHost`), synchronous and free of I/O:
- on large clusters only a sample of feasible nodes is searched for (`percentage_of_nodes_to_score`,
  adaptive like upstream's when 0: at least 100 nodes, at most all), starting where the
  previous search stopped so every node gets its turn;
- one feasible node is chosen without scoring; otherwise the highest weighted score wins,
  ties going to the node with the fewest pods, then the smallest name, so equal nodes
  receive pods in turn;
- no feasible node runs the PostFilter plugins (preemption) and raises `FitError` (its
  message is the user-facing summary, its `nomination` what preemption found); a plugin
  returning an Error status raises `SchedulingError` (the pod is retried, not reported).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kube.api import Pod
from scheduler.cache import NodeInfo
from scheduler.framework import CycleState, Diagnosis, FitError, Framework
from scheduler.framework.interfaces import Code

__all__ = ["ScheduleResult", "SchedulingAlgorithm", "SchedulingError", "num_feasible_nodes_to_find"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SchedulingError(Exception):
    """A plugin failed internally; the attempt is void and the pod is retried with backoff."""


@dataclass(frozen=True)
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    scores: dict[str, int] = field(default_factory=dict)
    """The chosen node's weighted score per score plugin (empty when only one node was feasible)."""


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """How many feasible nodes to look for before scoring (upstream `numFeasibleNodesToFind`)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage <= 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return min(num_all_nodes, max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND))


class SchedulingAlgorithm:
    """Runs one framework over a snapshot of nodes; remembers where the last search stopped."""

    def __init__(self, framework: Framework, *, percentage_of_nodes_to_score: int = 0) -> None:
        self.framework = framework
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._next_start_node_index = 0

    def schedule(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ScheduleResult:
        """Pick a node for `pod`; raise FitError when none fits, SchedulingError on plugin failure."""
        if not nodes:
            raise FitError(pod_key=pod.key, num_all_nodes=0, diagnosis=Diagnosis())
        state = CycleState()
        feasible, diagnosis, evaluated = self._find_nodes_that_fit(state, pod, nodes)
        if not feasible:
            nomination = self.framework.run_post_filter_plugins(state, pod, nodes, diagnosis)
            raise FitError(pod_key=pod.key, num_all_nodes=len(nodes), diagnosis=diagnosis, nomination=nomination)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        self.framework.run_pre_score_plugins(state, pod, feasible, nodes)
        breakdown: dict[str, dict[str, int]] = {}
        scores = self.framework.run_score_plugins(state, pod, feasible, breakdown=breakdown)
        best = min(feasible, key=lambda n: (-scores[n.name], n.pod_count, n.name))
        return ScheduleResult(best.name, evaluated, len(feasible),
                              {plugin: by_node[best.name] for plugin, by_node in breakdown.items()})

    def _find_nodes_that_fit(self, state: CycleState, pod: Pod,
                             nodes: Sequence[NodeInfo]) -> tuple[list[NodeInfo], Diagnosis, int]:
        diagnosis = Diagnosis()
        status = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if status is not None:
            if status.code is Code.ERROR:
                raise SchedulingError(f"{status.plugin}: {status.message}")
            diagnosis.pre_filter_message = status.message
            for n in nodes:
                diagnosis.record(n.name, status)
            return [], diagnosis, len(nodes)
        wanted = num_feasible_nodes_to_find(len(nodes), self.percentage_of_nodes_to_score)
        feasible: list[NodeInfo] = []
        start, evaluated = self._next_start_node_index % len(nodes), 0
        for i in range(len(nodes)):
            node_info = nodes[(start + i) % len(nodes)]
            evaluated += 1
            status = self.framework.run_filter_plugins(state, pod, node_info)
            if status is None:
                feasible.append(node_info)
                if len(feasible) >= wanted:
                    break
            elif status.code is Code.ERROR:
                raise SchedulingError(f"{status.plugin} on node {node_info.name}: {status.message}")
            else:
                diagnosis.record(node_info.name, status)
        self._next_start_node_index = (start + evaluated) % len(nodes)
        return feasible, diagnosis, evaluated
