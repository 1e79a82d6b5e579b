"""Server-side printing: `meta.k8s.io/v1 Table` responses with kubectl's columns.

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` and prints what
comes back; without Tables it can only show NAME and AGE. Columns and cell values follow
Kubernetes' printers (pkg/printers/internalversion); priority 1 columns appear with -o wide.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kube.humanize import human_duration
from kube.selectors import format_label_selector, selector_from_label_selector

__all__ = ["wants_table", "to_table", "human_duration"]

Obj = dict[str, Any]
Column = tuple[str, str, int]  # name, type, priority


def wants_table(accept: str) -> bool:
    return any("as=Table" in part and "g=meta.k8s.io" in part for part in accept.split(","))


def _age(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        t = datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - t).total_seconds())


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def pod_status_reason(pod: Obj) -> str:
    status, meta = pod.get("status") or {}, _meta(pod)
    reason = status.get("reason") or status.get("phase") or "Pending"
    init_statuses = status.get("initContainerStatuses") or []
    initializing = False
    for i, cs in enumerate(init_statuses):
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        initializing = True
        if term:
            reason = f"Init:{term.get('reason')}" if term.get("reason") else f"Init:ExitCode:{term.get('exitCode')}"
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len((pod.get('spec') or {}).get('initContainers') or [])}"
        break
    if not initializing:
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif state.get("terminated"):
                t = state["terminated"]
                reason = t.get("reason") or (f"Signal:{t['signal']}" if t.get("signal") else
                                             f"ExitCode:{t.get('exitCode')}")
            elif state.get("running") and cs.get("ready"):
                has_running = True
        if reason == "Completed" and has_running:
            reason = "Running"
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod_row(pod: Obj) -> list[Any]:
    status, spec = pod.get("status") or {}, pod.get("spec") or {}
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    gates = spec.get("readinessGates") or []
    return [_meta(pod).get("name"), f"{ready}/{len(spec.get('containers') or [])}", pod_status_reason(pod), restarts,
            _age(_meta(pod).get("creationTimestamp")), status.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
            f"{len(gates)}" if gates else "<none>"]


def _containers(template_spec: Obj) -> tuple[str, str]:
    cs = template_spec.get("containers") or []
    return ",".join(str(c.get("name")) for c in cs), ",".join(str(c.get("image")) for c in cs)


def _selector(spec: Obj) -> str:
    try:
        return format_label_selector(selector_from_label_selector(spec.get("selector"))) or "<none>"
    except (ValueError, KeyError):
        return "<invalid>"


def _deployment_row(d: Obj) -> list[Any]:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    names, images = _containers(((spec.get("template") or {}).get("spec")) or {})
    return [_meta(d).get("name"), f"{status.get('readyReplicas') or 0}/{spec.get('replicas', 1)}",
            status.get("updatedReplicas") or 0, status.get("availableReplicas") or 0,
            _age(_meta(d).get("creationTimestamp")), names, images, _selector(spec)]


def _replicaset_row(rs: Obj) -> list[Any]:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    names, images = _containers(((spec.get("template") or {}).get("spec")) or {})
    return [_meta(rs).get("name"), spec.get("replicas", 1), status.get("replicas") or 0,
            status.get("readyReplicas") or 0, _age(_meta(rs).get("creationTimestamp")), names, images,
            _selector(spec)]


def _node_row(n: Obj) -> list[Any]:
    status, spec, meta = n.get("status") or {}, n.get("spec") or {}, _meta(n)
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (meta.get("labels") or {}) if k.startswith("node-role.kubernetes.io/"))
    info = status.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    return [meta.get("name"), state, ",".join(roles) or "<none>", _age(meta.get("creationTimestamp")),
            info.get("kubeletVersion") or "", addrs.get("InternalIP") or "<none>", addrs.get("ExternalIP") or "<none>",
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def _event_row(e: Obj) -> list[Any]:
    inv = e.get("involvedObject") or {}
    last = e.get("lastTimestamp") or e.get("eventTime") or _meta(e).get("creationTimestamp")
    count = int(e.get("count") or 1)
    seen = _age(last) if count <= 1 else f"{_age(last)} (x{count} over {_age(e.get('firstTimestamp') or last)})"
    obj = f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"
    return [seen, e.get("type") or "", e.get("reason") or "", obj,
            e.get("message") or "", (e.get("source") or {}).get("component") or e.get("reportingComponent") or "",
            "", _age(e.get("firstTimestamp")), count, _meta(e).get("name")]


def _s(name: str, priority: int = 0, type_: str = "string") -> Column:
    return (name, type_, priority)


PRINTERS: dict[str, tuple[list[Column], Callable[[Obj], list[Any]]]] = {
    "Pod": ([_s("Name"), _s("Ready"), _s("Status"), _s("Restarts", 0, "string"), _s("Age"), _s("IP", 1),
             _s("Node", 1), _s("Nominated Node", 1), _s("Readiness Gates", 1)], _pod_row),
    "Deployment": ([_s("Name"), _s("Ready"), _s("Up-to-date", 0, "integer"), _s("Available", 0, "integer"),
                    _s("Age"), _s("Containers", 1), _s("Images", 1), _s("Selector", 1)], _deployment_row),
    "ReplicaSet": ([_s("Name"), _s("Desired", 0, "integer"), _s("Current", 0, "integer"), _s("Ready", 0, "integer"),
                    _s("Age"), _s("Containers", 1), _s("Images", 1), _s("Selector", 1)], _replicaset_row),
    "Node": ([_s("Name"), _s("Status"), _s("Roles"), _s("Age"), _s("Version"), _s("Internal-IP", 1),
              _s("External-IP", 1), _s("OS-Image", 1), _s("Kernel-Version", 1), _s("Container-Runtime", 1)], _node_row),
    "Namespace": ([_s("Name"), _s("Status"), _s("Age")],
                  lambda o: [_meta(o).get("name"), (o.get("status") or {}).get("phase", ""),
                             _age(_meta(o).get("creationTimestamp"))]),
    "Event": ([_s("Last Seen"), _s("Type"), _s("Reason"), _s("Object"), _s("Message"), _s("Source", 1),
               _s("Subobject", 1), _s("First Seen", 1), _s("Count", 1, "integer"), _s("Name", 1)], _event_row),
    "ConfigMap": ([_s("Name"), _s("Data", 0, "integer"), _s("Age")],
                  lambda o: [_meta(o).get("name"), len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                             _age(_meta(o).get("creationTimestamp"))]),
    "Secret": ([_s("Name"), _s("Type"), _s("Data", 0, "integer"), _s("Age")],
               lambda o: [_meta(o).get("name"), o.get("type") or "Opaque", len(o.get("data") or {}),
                          _age(_meta(o).get("creationTimestamp"))]),
    "Lease": ([_s("Name"), _s("Holder"), _s("Age")],
              lambda o: [_meta(o).get("name"), (o.get("spec") or {}).get("holderIdentity") or "",
                         _age(_meta(o).get("creationTimestamp"))]),
}
_DEFAULT: tuple[list[Column], Callable[[Obj], list[Any]]] = (
    [_s("Name"), _s("Age")], lambda o: [_meta(o).get("name"), _age(_meta(o).get("creationTimestamp"))])


def to_table(kind: str, items: list[Obj], *, list_meta: Obj | None = None, include_object: str = "Metadata") -> Obj:
    columns, row = PRINTERS.get(kind, _DEFAULT)
    rows = []
    for obj in items:
        if include_object == "Object":
            embedded: Obj | None = obj
        elif include_object == "None":
            embedded = None
        else:
            embedded = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}
        rows.append({"cells": row(obj), "object": embedded})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": dict(list_meta or {}),
            "columnDefinitions": [{"name": n, "type": t, "format": "name" if n == "Name" else "", "description": n,
                                   "priority": p} for n, t, p in columns],
            "rows": rows}
