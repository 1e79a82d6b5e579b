"""PodTopologySpread: keep matching pods evenly spread over topology domains (zones, nodes, ...).

Mirrors kube-scheduler `plugins/podtopologyspread` for the pod's own constraints:
- a constraint counts the pods matching its labelSelector in the pod's namespace (not
  terminating) per value of `topologyKey`, over the nodes that pass the pod's nodeSelector
  and required node affinity and carry every constraint's topology key;
- Filter (`whenUnsatisfiable: DoNotSchedule`): placing the pod on the node must keep
  `count(domain) + self - min(count)` within `maxSkew`, where `self` is 1 when the pod
  matches its own selector; with fewer than `minDomains` domains the minimum counts as 0.
  A node missing the topology key is unresolvable ("node(s) didn't match pod topology
  spread constraints (missing required label)"); a skew violation is resolvable
  ("node(s) didn't match pod topology spread constraints");
- Score (`ScheduleAnyway`): fewer matching pods in the node's domains score higher, each
  constraint weighted by log(domains + 2) as upstream, normalized to 0..100 with the
  emptiest node highest.
Upstream's cluster-default constraints for pods without any are not applied.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kube.api import Pod, TopologySpreadConstraint
from kube.selectors import LabelSelector, selector_from_label_selector
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_SCORE, Status
from scheduler.plugins._node_selection import pod_matches_node_selector_and_affinity

__all__ = ["PodTopologySpread", "NAME", "ERR_REASON_CONSTRAINTS", "ERR_REASON_MISSING_LABEL"]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
ERR_REASON_MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
_FILTER_KEY = "PreFilter" + NAME
_SCORE_KEY = "PreScore" + NAME


@dataclass(frozen=True)
class _Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector | None  # None: matches no pod
    min_domains: int
    self_match: int


def _constraints(pod: Pod, mode: str) -> list[_Constraint]:
    found: list[_Constraint] = []
    labels = pod.metadata.labels or {}
    for c in pod.spec.topology_spread_constraints or []:
        if c.when_unsatisfiable != mode:
            continue
        selector = _selector(c, labels)
        self_match = 1 if selector is not None and selector.matches(labels) else 0
        found.append(_Constraint(c.max_skew, c.topology_key, selector, c.min_domains or 1, self_match))
    return found


def _selector(c: TopologySpreadConstraint, labels: Mapping[str, str]) -> LabelSelector | None:
    if c.label_selector is None:
        return None
    raw = c.label_selector.to_dict()
    # matchLabelKeys: the pod's own values for these keys join the selector.
    extra = {k: labels[k] for k in c.match_label_keys or [] if k in labels}
    if extra:
        raw = {**raw, "matchLabels": {**(raw.get("matchLabels") or {}), **extra}}
    return selector_from_label_selector(raw)


def _count(pod: Pod, constraints: list[_Constraint], nodes: Sequence[NodeInfo]) -> list[Counter[str]]:
    """Matching pods per domain for each constraint, over the nodes eligible for `pod`."""
    counts: list[Counter[str]] = [Counter() for _ in constraints]
    namespace = pod.metadata.namespace
    for info in nodes:
        node = info.node
        if node is None:
            continue
        labels = node.metadata.labels or {}
        if any(c.topology_key not in labels for c in constraints):
            continue
        if not pod_matches_node_selector_and_affinity(pod, node):
            continue
        for i, c in enumerate(constraints):
            domain = labels[c.topology_key]
            counts[i].setdefault(domain, 0)
            if c.selector is None:
                continue
            for other in info.pods.values():
                p = other.pod
                if p.metadata.namespace == namespace and p.metadata.deletion_timestamp is None \
                        and c.selector.matches(p.metadata.labels or {}):
                    counts[i][domain] += 1
    return counts


class PodTopologySpread:
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        constraints = _constraints(pod, "DoNotSchedule")
        state.write(_FILTER_KEY, (constraints, _count(pod, constraints, nodes) if constraints else []))
        return None if constraints else Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        cached = state.get(_FILTER_KEY)
        if cached is None:
            self.pre_filter(state, pod, [node_info])
            cached = state.get(_FILTER_KEY)
        constraints, counts = cached
        if not constraints:
            return None
        labels = (node_info.node.metadata.labels or {}) if node_info.node is not None else {}
        for c, per_domain in zip(constraints, counts, strict=True):
            domain = labels.get(c.topology_key)
            if domain is None:
                return Status.unresolvable(ERR_REASON_MISSING_LABEL, plugin=NAME)
            lowest = min(per_domain.values(), default=0) if len(per_domain) >= c.min_domains else 0
            if per_domain.get(domain, 0) + c.self_match - lowest > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS, plugin=NAME)
        return None

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        constraints = _constraints(pod, "ScheduleAnyway")
        counts = _count(pod, constraints, nodes) if constraints else []
        weights = [math.log(len(per_domain) + 2) for per_domain in counts]
        state.write(_SCORE_KEY, (constraints, counts, weights))
        return None if constraints else Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        constraints, counts, weights = state.get(_SCORE_KEY) or ([], [], [])
        if not constraints:
            return 0
        labels = (node_info.node.metadata.labels or {}) if node_info.node is not None else {}
        total = 0.0
        for c, per_domain, weight in zip(constraints, counts, weights, strict=True):
            domain = labels.get(c.topology_key)
            if domain is not None:
                total += (per_domain.get(domain, 0) + c.max_skew - 1) * weight
        return round(total)

    def normalize_scores(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        constraints, _, _ = state.get(_SCORE_KEY) or ([], [], [])
        if not constraints or not scores:
            for node in scores:
                scores[node] = 0 if constraints else MAX_SCORE
            return None
        high, low = max(scores.values()), min(scores.values())
        for node, s in scores.items():
            scores[node] = MAX_SCORE if high == 0 else MAX_SCORE * (high + low - s) // high
        return None


def new(args: Mapping[str, Any]) -> PodTopologySpread:
    return PodTopologySpread()
