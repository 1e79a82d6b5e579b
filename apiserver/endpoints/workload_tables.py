"""Table printers of ReplicationControllers and StatefulSets, as kubectl shows them.

Mirrors printReplicationController and printStatefulSet of Kubernetes'
pkg/printers/internalversion: `NAME DESIRED CURRENT READY AGE` (+ `CONTAINERS IMAGES SELECTOR`
with -o wide, the selector as `k=v,...`) and `NAME READY AGE` (+ `CONTAINERS IMAGES`), READY
being `readyReplicas/spec.replicas`. Cells never raise on a malformed object.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import Column, Obj, Printer, _age, _containers, _name

__all__ = ["WORKLOAD_PRINTERS"]

_NAME = Column("Name", format="name", description="Name must be unique within a namespace.")
_AGE = Column("Age", description="The time since the object was created.")
_CONTAINERS = Column("Containers", priority=1, description="Names of each container in the template.")
_IMAGES = Column("Images", priority=1, description="Images referenced by each container in the template.")
_SELECTOR = Column("Selector", priority=1, description="Label selector over the pods.")


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _template_spec(spec: Obj) -> Obj:
    return _dict(_dict(spec.get("template")).get("spec"))


def _rc_cells(rc: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(rc.get("spec")), _dict(rc.get("status"))
    names, images = _containers(_template_spec(spec))
    selector = ",".join(f"{k}={v}" for k, v in sorted(_dict(spec.get("selector")).items())) or "<none>"
    return [_name(rc), spec.get("replicas", 1), status.get("replicas") or 0, status.get("readyReplicas") or 0,
            _age(rc, now), names, images, selector]


def _sts_cells(sts: Obj, now: datetime) -> list[Any]:
    spec, status = _dict(sts.get("spec")), _dict(sts.get("status"))
    names, images = _containers(_template_spec(spec))
    return [_name(sts), f"{status.get('readyReplicas') or 0}/{spec.get('replicas', 1)}", _age(sts, now),
            names, images]


WORKLOAD_PRINTERS: dict[str, Printer] = {
    "ReplicationController": Printer(
        (_NAME, Column("Desired", "integer", description="Desired replicas."),
         Column("Current", "integer", description="Observed replicas."),
         Column("Ready", "integer", description="Ready replicas."), _AGE, _CONTAINERS, _IMAGES, _SELECTOR), _rc_cells),
    "StatefulSet": Printer(
        (_NAME, Column("Ready", description="Number of the pod with ready state."), _AGE, _CONTAINERS, _IMAGES),
        _sts_cells),
}
