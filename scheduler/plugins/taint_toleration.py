"""TaintToleration: a node's NoSchedule/NoExecute taints must be tolerated; PreferNoSchedule ones score.

Mirrors kube-scheduler `plugins/tainttoleration`:
- Filter: the first NoSchedule or NoExecute taint the pod does not tolerate rejects the node
  with "node(s) had untolerated taint {key: value}" (UnschedulableAndUnresolvable);
- Score: the number of PreferNoSchedule taints the pod does not tolerate, reversed after
  normalization, so the node with the fewest such taints scores 100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube.api import Pod
from kube.taints import tolerations_tolerate_taint
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status
from scheduler.framework.normalize import default_normalize_score

__all__ = ["NAME", "TaintToleration"]

NAME = "TaintToleration"


class TaintToleration:
    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        for taint in (node.spec.taints or []) if node is not None else []:
            if taint.effect not in ("NoSchedule", "NoExecute"):
                continue
            if not tolerations_tolerate_taint(pod.spec.tolerations, taint):
                return Status.unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}",
                                           plugin=NAME)
        return None

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        soft = any(t.effect == "PreferNoSchedule" for n in feasible if n.node is not None
                   for t in n.node.spec.taints or [])
        return None if soft else Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        if node is None:
            return 0
        return sum(1 for t in node.spec.taints or []
                   if t.effect == "PreferNoSchedule" and not tolerations_tolerate_taint(pod.spec.tolerations, t))

    def normalize_scores(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores, reverse=True)
        return None


def new(args: Mapping[str, Any]) -> TaintToleration:
    return TaintToleration()
