"""Table printers of DaemonSets and ControllerRevisions, as kubectl shows them.

Mirrors printDaemonSet and printControllerRevision of Kubernetes'
pkg/printers/internalversion: `NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR
AGE` (+ `CONTAINERS IMAGES SELECTOR` with -o wide) and `NAME CONTROLLER REVISION AGE`, where
the controller prints as `<kind>.<group>/<name>` (`daemonset.apps/fluentd`) or `<none>`.
Cells never raise on a malformed object.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import (
    _AGE,
    _NAME,
    _WIDE_TEMPLATE,
    Column,
    Obj,
    Printer,
    _age,
    _meta,
    _name,
    _template_cells,
)

__all__ = ["DAEMONSET_PRINTERS"]


def _format_labels(labels: Any) -> str:
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _daemonset_cells(ds: Obj, now: datetime) -> list[Any]:
    spec, status = ds.get("spec") or {}, ds.get("status") or {}
    node_selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")
    return [_name(ds), status.get("desiredNumberScheduled") or 0, status.get("currentNumberScheduled") or 0,
            status.get("numberReady") or 0, status.get("updatedNumberScheduled") or 0,
            status.get("numberAvailable") or 0, _format_labels(node_selector), _age(ds, now),
            *_template_cells(spec)]


def _controller_name(obj: Obj) -> str:
    refs = _meta(obj).get("ownerReferences") or []
    ref = next((r for r in refs if isinstance(r, dict) and r.get("controller")), None)
    if ref is None:
        return "<none>"
    api_version = str(ref.get("apiVersion") or "")
    group = api_version.split("/")[0] if "/" in api_version else ""
    kind = str(ref.get("kind") or "")
    return f"{(f'{kind}.{group}' if group else kind).lower()}/{ref.get('name') or ''}"


def _controller_revision_cells(cr: Obj, now: datetime) -> list[Any]:
    return [_name(cr), _controller_name(cr), cr.get("revision") or 0, _age(cr, now)]


DAEMONSET_PRINTERS: dict[str, Printer] = {
    "DaemonSet": Printer((_NAME,
                          Column("Desired", "integer", description="The number of nodes that should run the pod."),
                          Column("Current", "integer", description="The number of nodes running the pod."),
                          Column("Ready", "integer", description="The number of nodes with the pod ready."),
                          Column("Up-to-date", "integer", description="Nodes running the updated pod."),
                          Column("Available", "integer", description="Nodes with the pod available."),
                          Column("Node Selector", description="The pod template's nodeSelector."),
                          _AGE, *_WIDE_TEMPLATE), _daemonset_cells),
    "ControllerRevision": Printer((_NAME, Column("Controller", description="Controller of the object."),
                                   Column("Revision", "integer", description="Revision of the ControllerRevision."),
                                   _AGE), _controller_revision_cells),
}
