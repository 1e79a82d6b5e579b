"""`pkctl describe daemonset`: kubectl's layout of a DaemonSet, before its pod template.

Mirrors kubectl's DaemonSetDescriber: selector, the template's node selector, labels and
annotations, the node counts from status (desired, current, up to date, available,
misscheduled) and the phases of the pods it controls. The caller adds the pod template and
the events.
"""

from __future__ import annotations

from typing import Any

from kubectl.describe_text import Section

__all__ = ["describe_daemonset"]

Obj = dict[str, Any]


def _labels(values: Any) -> str:
    if not isinstance(values, dict) or not values:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(values.items()))


def describe_daemonset(s: Section, ds: Obj, pods: list[Obj], *, selector: str) -> None:
    """Write everything up to the pod template; `pods` are all pods of the namespace."""
    meta, spec, st = ds["metadata"], ds.get("spec") or {}, ds.get("status") or {}
    s.field("Name", meta.get("name"))
    s.field("Namespace", meta.get("namespace"))
    s.field("Selector", selector)
    s.field("Node-Selector", _labels(((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")))
    s.mapping("Labels", meta.get("labels"))
    s.mapping("Annotations", {k: v for k, v in (meta.get("annotations") or {}).items()
                              if k != "kubectl.kubernetes.io/last-applied-configuration"}, sep=": ")
    s.field("Desired Number of Nodes Scheduled", st.get("desiredNumberScheduled", 0))
    s.field("Current Number of Nodes Scheduled", st.get("currentNumberScheduled", 0))
    s.field("Number of Nodes Scheduled with Up-to-date Pods", st.get("updatedNumberScheduled", 0))
    s.field("Number of Nodes Scheduled with Available Pods", st.get("numberAvailable", 0))
    s.field("Number of Nodes Misscheduled", st.get("numberMisscheduled", 0))
    mine = [p for p in pods if any(o.get("uid") == meta.get("uid") and o.get("controller")
                                   for o in (p.get("metadata") or {}).get("ownerReferences") or [])]
    phases = [(p.get("status") or {}).get("phase") for p in mine]
    s.field("Pods Status", f"{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
                           f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed")
