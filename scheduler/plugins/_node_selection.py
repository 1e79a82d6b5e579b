"""Node selector terms as core/v1 evaluates them: nodeSelector, nodeAffinity terms, requirements.

- a `NodeSelectorRequirement` with In / NotIn / Exists / DoesNotExist / Gt / Lt against the
  node's labels (`matchExpressions`) or its fields (`matchFields`, only `metadata.name`);
  NotIn and DoesNotExist hold when the label is absent, Gt and Lt compare integers and
  fail on a label that is not one;
- a term holds when all its requirements do; an empty term matches nothing;
- `required` node affinity holds when any term does.
Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping

from kube.api import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod

__all__ = ["requirement_matches", "term_matches", "pod_matches_node_selector_and_affinity"]


def requirement_matches(req: NodeSelectorRequirement, values: Mapping[str, str]) -> bool:
    present = req.key in values
    value = values.get(req.key, "")
    wanted = req.values or []
    op = req.operator
    if op == "In":
        return present and value in wanted
    if op == "NotIn":
        return not present or value not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(wanted) != 1:
            return False
        try:
            have, bound = int(value), int(wanted[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    expressions, fields = term.match_expressions or [], term.match_fields or []
    if not expressions and not fields:
        return False
    labels = node.metadata.labels or {}
    node_fields = {"metadata.name": node.metadata.name or ""}
    return all(requirement_matches(r, labels) for r in expressions) and \
        all(requirement_matches(r, node_fields) for r in fields)


def pod_matches_node_selector_and_affinity(pod: Pod, node: Node) -> bool:
    """spec.nodeSelector and required node affinity both hold for `node`."""
    labels = node.metadata.labels or {}
    if any(labels.get(k) != v for k, v in (pod.spec.node_selector or {}).items()):
        return False
    affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    if required is None:
        return True
    return any(term_matches(t, node) for t in required.node_selector_terms)
