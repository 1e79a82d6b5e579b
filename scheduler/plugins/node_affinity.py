"""NodeAffinity: spec.nodeSelector and required node affinity filter; preferred terms score.

Mirrors kube-scheduler `plugins/nodeaffinity`:
- Filter: the node must carry every nodeSelector label and match one of the required
  nodeSelectorTerms; otherwise "node(s) didn't match Pod's node affinity/selector", which no
  preemption can change (UnschedulableAndUnresolvable);
- Score: the sum of the weights of the preferred terms the node matches, normalized so the
  best node gets 100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod, PreferredSchedulingTerm
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status
from scheduler.framework.normalize import default_normalize_score
from scheduler.plugins._node_selection import pod_matches_node_selector_and_affinity, term_matches

__all__ = ["NodeAffinity", "NAME", "ERR_REASON_POD"]

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"


def _preferred(pod: Pod) -> list[PreferredSchedulingTerm]:
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    return (affinity.preferred_during_scheduling_ignored_during_execution or []) if affinity else []


class NodeAffinity:
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
        return None if pod.spec.node_selector or required is not None else Status.skip()

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        return None if _preferred(pod) else Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None or pod_matches_node_selector_and_affinity(pod, node):
            return None
        return Status.unresolvable(ERR_REASON_POD, plugin=NAME)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        preferred = _preferred(pod)
        node = node_info.node
        if not preferred or node is None:
            return 0
        return sum(t.weight for t in preferred if t.weight and term_matches(t.preference, node))

    def normalize_scores(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores)
        return None


def new(args: Mapping[str, Any]) -> NodeAffinity:
    return NodeAffinity()
