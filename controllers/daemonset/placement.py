"""Which nodes a DaemonSet's pod belongs on, and the pod's tolerations and node affinity there.

Mirrors NodeShouldRunDaemonPod / predicates of pkg/controller/daemon and the helpers of
pkg/controller/daemon/util:
- a node is eligible when the template's nodeName (if any) names it, it carries every
  nodeSelector label, one of the required node-affinity terms matches it, and every
  NoSchedule / NoExecute taint on it is tolerated by the pod's tolerations plus the daemon
  tolerations below;
- `should_run` says a pod should be created there; `should_continue_running` says an existing
  pod may stay: only an untolerated NoExecute taint or a failed selector/affinity evicts,
  an untolerated NoSchedule taint merely stops new pods;
- daemon pods tolerate what upstream's AddOrUpdateDaemonPodTolerations adds: not-ready and
  unreachable (NoExecute, no time limit), disk-, memory- and pid-pressure and unschedulable
  (NoSchedule), and network-unavailable (NoSchedule) for hostNetwork pods;
- a pod is pinned to its node by required node affinity `matchFields metadata.name In
  [node]`, which replaces any required terms (the node was already checked against them),
  so the scheduler, not this controller, binds it.
Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kube.api import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    Toleration,
)
from kube.taints import (
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
    tolerations_tolerate_taint,
)

__all__ = ["Placement", "add_daemon_tolerations", "daemon_tolerations", "node_should_run_daemon_pod", "pin_to_node",
           "target_node_name"]

NODE_NAME_FIELD = "metadata.name"
_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"


@dataclass(frozen=True)
class Placement:
    should_run: bool
    should_continue_running: bool


def add_daemon_tolerations(spec: PodSpec) -> None:
    """Add the daemon tolerations `spec` does not already carry (same key, operator and effect)."""
    spec.tolerations = daemon_tolerations(spec)


def daemon_tolerations(spec: PodSpec) -> list[Toleration]:
    """`spec`'s tolerations followed by the daemon tolerations it does not already carry."""
    wanted = [Toleration(key=TAINT_NODE_NOT_READY, operator="Exists", effect="NoExecute"),
              Toleration(key=TAINT_NODE_UNREACHABLE, operator="Exists", effect="NoExecute"),
              Toleration(key=_DISK_PRESSURE, operator="Exists", effect="NoSchedule"),
              Toleration(key=_MEMORY_PRESSURE, operator="Exists", effect="NoSchedule"),
              Toleration(key=_PID_PRESSURE, operator="Exists", effect="NoSchedule"),
              Toleration(key=TAINT_NODE_UNSCHEDULABLE, operator="Exists", effect="NoSchedule")]
    if spec.host_network:
        wanted.append(Toleration(key=_NETWORK_UNAVAILABLE, operator="Exists", effect="NoSchedule"))
    have = list(spec.tolerations or [])
    for toleration in wanted:
        if not any((t.key, t.operator, t.effect) == (toleration.key, toleration.operator, toleration.effect)
                   for t in have):
            have.append(toleration)
    return have


def pin_to_node(spec: PodSpec, node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: require `metadata.name In [node_name]`."""
    term = NodeSelectorTerm(match_fields=[NodeSelectorRequirement(key=NODE_NAME_FIELD, operator="In",
                                                                  values=[node_name])])
    affinity = spec.affinity or Affinity()
    node_affinity = affinity.node_affinity or NodeAffinity()
    node_affinity.required_during_scheduling_ignored_during_execution = NodeSelector(node_selector_terms=[term])
    affinity.node_affinity = node_affinity
    spec.affinity = affinity


def target_node_name(pod: Pod) -> str | None:
    """The node a daemon pod is bound to, or pinned to while still unscheduled."""
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    for term in required.node_selector_terms if required else []:
        for req in term.match_fields or []:
            if req.key == NODE_NAME_FIELD and req.operator == "In" and len(req.values or []) == 1:
                return (req.values or [""])[0]
    return None


def _requirement_matches(req: NodeSelectorRequirement, values: Mapping[str, str]) -> bool:
    present, value, wanted = req.key in values, values.get(req.key, ""), req.values or []
    if req.operator in ("Gt", "Lt"):
        try:
            have, bound = int(value), int(wanted[0]) if len(wanted) == 1 else None
        except ValueError:
            return False
        return present and bound is not None and (have > bound if req.operator == "Gt" else have < bound)
    return {"In": present and value in wanted, "NotIn": not present or value not in wanted,
            "Exists": present, "DoesNotExist": not present}.get(req.operator, False)


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    expressions, fields = term.match_expressions or [], term.match_fields or []
    if not expressions and not fields:
        return False
    labels, node_fields = node.metadata.labels or {}, {NODE_NAME_FIELD: node.metadata.name or ""}
    return all(_requirement_matches(r, labels) for r in expressions) and \
        all(_requirement_matches(r, node_fields) for r in fields)


def _fits_selector_and_affinity(spec: PodSpec, node: Node) -> bool:
    labels = node.metadata.labels or {}
    if any(labels.get(k) != v for k, v in (spec.node_selector or {}).items()):
        return False
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    return required is None or any(_term_matches(t, node) for t in required.node_selector_terms)


def node_should_run_daemon_pod(template_spec: PodSpec, node: Node,
                               tolerations: list[Toleration] | None = None) -> Placement:
    """Whether a daemon pod with `template_spec` should be created on / may stay on `node`.

    `tolerations`, when given, is `daemon_tolerations(template_spec)` worked out once for a
    sync that asks about every node."""
    if template_spec.node_name and template_spec.node_name != node.metadata.name:
        return Placement(False, False)
    if not _fits_selector_and_affinity(template_spec, node):
        return Placement(False, False)
    taints = [t for t in node.spec.taints or [] if t.effect in ("NoSchedule", "NoExecute")]
    if not taints:
        return Placement(True, True)
    tolerated = daemon_tolerations(template_spec) if tolerations is None else tolerations
    untolerated = [t for t in taints if not tolerations_tolerate_taint(tolerated, t)]
    if any(t.effect == "NoExecute" for t in untolerated):
        return Placement(False, False)
    if untolerated:
        return Placement(False, True)
    return Placement(True, True)
