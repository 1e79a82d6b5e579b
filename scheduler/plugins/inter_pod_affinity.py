"""InterPodAffinity: place pods near (affinity) or away from (anti-affinity) other pods.

Mirrors kube-scheduler `plugins/interpodaffinity`. A term matches a pod when its
labelSelector does and the pod is in one of the term's namespaces (`namespaces`, or every
namespace for an empty `namespaceSelector`, else the incoming pod's own); a term holds for a
node when a matching pod runs on a node with the same value of `topologyKey`.
- Filter, in upstream's order and words:
  1. an existing pod's required anti-affinity term matching the incoming pod forbids that
     pod's domain: "node(s) didn't satisfy existing pods anti-affinity rules";
  2. the incoming pod's required anti-affinity terms: "node(s) didn't match pod
     anti-affinity rules";
  3. the incoming pod's required affinity terms must all hold: "node(s) didn't match pod
     affinity rules" — unless no pod anywhere matches them and the pod matches its own terms
     (the first pod of a group may go anywhere).
  A node missing a topology key cannot satisfy affinity and is never excluded by anti-affinity.
- Score: preferred terms of the incoming pod add (affinity) or subtract (anti-affinity) their
  weight for every matching pod in the node's domain, and existing pods' preferred terms
  matching the incoming pod do the same; normalized min..max onto 0..100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kube.api import Pod, PodAffinityTerm
from kube.selectors import LabelSelector, selector_from_label_selector
from scheduler.cache import NodeInfo
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Status
from scheduler.framework.normalize import min_max_normalize

__all__ = ["InterPodAffinity", "NAME", "ERR_AFFINITY", "ERR_ANTI_AFFINITY", "ERR_EXISTING_ANTI_AFFINITY"]

NAME = "InterPodAffinity"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
_FILTER_KEY = "PreFilter" + NAME
_SCORE_KEY = "PreScore" + NAME

Domain = tuple[str, str]  # (topology key, value)


@dataclass(frozen=True)
class _Term:
    topology_key: str
    selector: LabelSelector | None
    namespaces: frozenset[str] | None  # None: every namespace
    weight: int = 1

    def matches(self, pod: Pod) -> bool:
        if self.selector is None:
            return False
        if self.namespaces is not None and (pod.metadata.namespace or "") not in self.namespaces:
            return False
        return self.selector.matches(pod.metadata.labels or {})


def _term(t: PodAffinityTerm, owner: Pod, weight: int = 1) -> _Term:
    selector = selector_from_label_selector(t.label_selector.to_dict()) if t.label_selector is not None else None
    if t.namespaces:
        namespaces: frozenset[str] | None = frozenset(t.namespaces)
    elif t.namespace_selector is not None and not t.namespace_selector.to_dict():
        namespaces = None
    else:
        namespaces = frozenset([owner.metadata.namespace or ""])
    return _Term(t.topology_key, selector, namespaces, weight)


def _required(pod: Pod, anti: bool) -> list[_Term]:
    aff = pod.spec.affinity
    group = (aff.pod_anti_affinity if anti else aff.pod_affinity) if aff else None
    return [_term(t, pod) for t in (group.required_during_scheduling_ignored_during_execution or [])] if group else []


def _preferred(pod: Pod, anti: bool) -> list[_Term]:
    aff = pod.spec.affinity
    group = (aff.pod_anti_affinity if anti else aff.pod_affinity) if aff else None
    terms = group.preferred_during_scheduling_ignored_during_execution if group else None
    return [_term(w.pod_affinity_term, pod, w.weight) for w in terms or []]


def _has_affinity_terms(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)


@dataclass
class _FilterState:
    affinity: list[_Term]
    anti_affinity: list[_Term]
    affinity_counts: Counter[Domain]       # per domain: pods matching all affinity terms
    anti_counts: Counter[Domain]           # per domain: pods matching an anti-affinity term
    existing_anti: Counter[Domain]         # per domain: existing pods whose anti-affinity matches us
    any_affinity_match: bool


class InterPodAffinity:
    name = NAME

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity, anti = _required(pod, False), _required(pod, True)
        s = _FilterState(affinity, anti, Counter(), Counter(), Counter(), False)
        own_terms = bool(affinity or anti)
        for info in nodes:
            if info.node is None or not (own_terms or info.pods_with_affinity):
                continue
            labels = info.node.metadata.labels or {}
            # Without terms of its own, only other pods' anti-affinity can exclude this pod.
            for other in (info.pods if own_terms else info.pods_with_affinity).values():
                p = other.pod
                if p.metadata.deletion_timestamp is not None:
                    continue
                if _has_affinity_terms(p):
                    for t in _required(p, True):
                        if t.topology_key in labels and t.matches(pod):
                            s.existing_anti[(t.topology_key, labels[t.topology_key])] += 1
                if affinity and all(t.matches(p) for t in affinity):
                    s.any_affinity_match = True
                    for t in affinity:
                        if t.topology_key in labels:
                            s.affinity_counts[(t.topology_key, labels[t.topology_key])] += 1
                for t in anti:
                    if t.topology_key in labels and t.matches(p):
                        s.anti_counts[(t.topology_key, labels[t.topology_key])] += 1
        state.write(_FILTER_KEY, s)
        return None if own_terms or s.existing_anti else Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s: _FilterState | None = state.get(_FILTER_KEY)
        if s is None:
            self.pre_filter(state, pod, [node_info])
            s = state.get(_FILTER_KEY)
            assert s is not None
        labels = (node_info.node.metadata.labels or {}) if node_info.node is not None else {}
        if s.existing_anti and any(s.existing_anti.get((k, v)) for k, v in labels.items()):
            return Status.unschedulable(ERR_EXISTING_ANTI_AFFINITY, plugin=NAME)
        for t in s.anti_affinity:
            if t.topology_key in labels and s.anti_counts.get((t.topology_key, labels[t.topology_key])):
                return Status.unschedulable(ERR_ANTI_AFFINITY, plugin=NAME)
        if s.affinity:
            if any(t.topology_key not in labels for t in s.affinity):
                return Status.unresolvable(ERR_AFFINITY, plugin=NAME)
            satisfied = all(s.affinity_counts.get((t.topology_key, labels[t.topology_key])) for t in s.affinity)
            if not satisfied:
                first_of_group = not s.any_affinity_match and all(t.matches(pod) for t in s.affinity)
                if not first_of_group:
                    return Status.unschedulable(ERR_AFFINITY, plugin=NAME)
        return None

    def pre_score(self, state: CycleState, pod: Pod, feasible: Sequence[NodeInfo],
                  nodes: Sequence[NodeInfo]) -> Status | None:
        preferred, preferred_anti = _preferred(pod, False), _preferred(pod, True)
        own_terms = bool(preferred or preferred_anti)
        scores: Counter[Domain] = Counter()
        for info in nodes:
            if info.node is None or not (own_terms or info.pods_with_affinity):
                continue
            labels = info.node.metadata.labels or {}
            for other in (info.pods if own_terms else info.pods_with_affinity).values():
                p = other.pod
                for t in preferred:
                    if t.topology_key in labels and t.matches(p):
                        scores[(t.topology_key, labels[t.topology_key])] += t.weight
                for t in preferred_anti:
                    if t.topology_key in labels and t.matches(p):
                        scores[(t.topology_key, labels[t.topology_key])] -= t.weight
                if _has_affinity_terms(p):
                    for t in _preferred(p, False):
                        if t.topology_key in labels and t.matches(pod):
                            scores[(t.topology_key, labels[t.topology_key])] += t.weight
                    for t in _preferred(p, True):
                        if t.topology_key in labels and t.matches(pod):
                            scores[(t.topology_key, labels[t.topology_key])] -= t.weight
        state.write(_SCORE_KEY, scores)
        return None if scores else Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        scores: Counter[Domain] = state.get(_SCORE_KEY) or Counter()
        if not scores or node_info.node is None:
            return 0
        return sum(scores.get((k, v), 0) for k, v in (node_info.node.metadata.labels or {}).items())

    def normalize_scores(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        scores.update(min_max_normalize(dict(scores)))
        return None


def new(args: Mapping[str, Any]) -> InterPodAffinity:
    return InterPodAffinity()
