"""Server-side printing: `meta.k8s.io/v1 Table` responses with kubectl's columns.

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` and prints what
comes back, so the server decides the columns. They follow Kubernetes' printers
(pkg/printers/internalversion): the same column names, types and order, and priority 1 for
the columns kubectl shows only with `-o wide`. Like kube-apiserver, every row carries the
wide cells too; the client drops what it does not show. Kinds without a printer there
(roles, clusterroles, limitranges) get the generic `NAME, CREATED AT` table of the
apiserver's default table convertor.

Guarantees: one row per item, cells in column order, never an exception for a malformed
object (missing fields print as upstream prints zero values).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kube.humanize import human_duration
from kube.jsonpath import JSONPathError, evaluate
from kube.selectors import format_label_selector, selector_from_label_selector

__all__ = ["wants_table", "to_table", "custom_printer", "human_duration", "pod_status_reason", "Printer"]

Obj = dict[str, Any]
Cells = Callable[[Obj, datetime], list[Any]]


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    priority: int = 0
    description: str = ""
    format: str = ""


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    cells: Cells
    conditions: Callable[[Obj], list[Obj]] | None = None


def wants_table(accept: str) -> bool:
    return any("as=Table" in part and "g=meta.k8s.io" in part for part in accept.split(","))


def _time(ts: Any) -> datetime | None:
    if not ts or not isinstance(ts, str):
        return None
    try:
        return datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def _since(ts: Any, now: datetime) -> str:
    """translateTimestampSince: `<unknown>` for a zero time, else the human duration."""
    t = _time(ts)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name") or "")


def _age(obj: Obj, now: datetime) -> str:
    return _since(_meta(obj).get("creationTimestamp"), now)


# --- Pods -------------------------------------------------------------------------------

def _restartable(container: Obj | None) -> bool:
    """A sidecar: an init container with restartPolicy Always."""
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _condition_true(status: Obj, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True" for c in status.get("conditions") or [])


def _terminated_reason(term: Obj, prefix: str = "") -> str:
    if term.get("reason"):
        return f"{prefix}{term['reason']}"
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


@dataclass
class _PodSummary:
    reason: str
    ready: int = 0
    total: int = 0
    restarts: int = 0
    last_restart: datetime | None = None
    sidecar_restarts: int = 0
    sidecar_last_restart: datetime | None = None


def _later(a: datetime | None, cs: Obj) -> datetime | None:
    finished = _time(((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
    return finished if finished and (a is None or finished > a) else a


def _summarize_init(pod: Obj, s: _PodSummary) -> bool:
    """Walk init containers as printPod does; True while the pod is still initializing."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    inits = {c.get("name"): c for c in spec.get("initContainers") or []}
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        s.restarts += int(cs.get("restartCount") or 0)
        s.last_restart = _later(s.last_restart, cs)
        sidecar = _restartable(inits.get(cs.get("name")))
        if sidecar:
            s.sidecar_restarts += int(cs.get("restartCount") or 0)
            s.sidecar_last_restart = _later(s.sidecar_last_restart, cs)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting") or {}
        if term and int(term.get("exitCode") or 0) == 0:
            continue
        if sidecar and cs.get("started"):
            s.ready += 1 if cs.get("ready") else 0
            continue
        if term:
            s.reason = _terminated_reason(term, "Init:")
        elif waiting.get("reason") and waiting["reason"] != "PodInitializing":
            s.reason = f"Init:{waiting['reason']}"
        else:
            s.reason = f"Init:{i}/{len(inits)}"
        return True
    return False


def _summarize_containers(pod: Obj, s: _PodSummary) -> None:
    status = pod.get("status") or {}
    s.restarts, s.last_restart = s.sidecar_restarts, s.sidecar_last_restart
    has_running = False
    for cs in reversed(status.get("containerStatuses") or []):
        s.restarts += int(cs.get("restartCount") or 0)
        s.last_restart = _later(s.last_restart, cs)
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            s.reason = state["waiting"]["reason"]
        elif state.get("terminated"):
            s.reason = _terminated_reason(state["terminated"])
        elif cs.get("ready") and state.get("running") is not None:
            has_running = True
            s.ready += 1
    if s.reason == "Completed" and has_running:
        s.reason = "Running" if _condition_true(status, "Ready") else "NotReady"


def _summarize_pod(pod: Obj) -> _PodSummary:
    spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, _meta(pod)
    phase = status.get("phase") or ""
    s = _PodSummary(reason=status.get("reason") or phase)
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        s.reason = "SchedulingGated"
    s.total = len(spec.get("containers") or []) + sum(1 for c in spec.get("initContainers") or [] if _restartable(c))
    if not _summarize_init(pod, s) or _condition_true(status, "Initialized"):
        _summarize_containers(pod, s)
    if meta.get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            s.reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            s.reason = "Terminating"
    return s


def pod_status_reason(pod: Obj) -> str:
    """The STATUS cell of `kubectl get pods`."""
    return _summarize_pod(pod).reason


def _readiness_gates(pod: Obj) -> str:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or []}
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


def _pod_cells(pod: Obj, now: datetime) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    s = _summarize_pod(pod)
    restarts = str(s.restarts)
    if s.restarts and s.last_restart is not None:
        restarts = f"{s.restarts} ({human_duration((now - s.last_restart).total_seconds())} ago)"
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips else None) or status.get("podIP") or "<none>"
    return [_name(pod), f"{s.ready}/{s.total}", s.reason, restarts, _age(pod, now), ip,
            spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", _readiness_gates(pod)]


def _pod_conditions(pod: Obj) -> list[Obj]:
    """Row conditions marking finished pods, as upstream's podSuccessConditions/podFailedConditions."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


# --- Workloads --------------------------------------------------------------------------

def _containers(template_spec: Obj) -> tuple[str, str]:
    cs = template_spec.get("containers") or []
    return ",".join(str(c.get("name") or "") for c in cs), ",".join(str(c.get("image") or "") for c in cs)


def _selector(spec: Obj) -> str:
    try:
        return format_label_selector(selector_from_label_selector(spec.get("selector"))) or "<none>"
    except (ValueError, KeyError, TypeError, AttributeError):
        return "<invalid>"


def _template_cells(spec: Obj) -> list[Any]:
    names, images = _containers(((spec.get("template") or {}).get("spec")) or {})
    return [names, images, _selector(spec)]


def _deployment_cells(d: Obj, now: datetime) -> list[Any]:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    return [_name(d), f"{status.get('readyReplicas') or 0}/{spec.get('replicas', 1)}",
            status.get("updatedReplicas") or 0, status.get("availableReplicas") or 0, _age(d, now),
            *_template_cells(spec)]


def _replicaset_cells(rs: Obj, now: datetime) -> list[Any]:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    return [_name(rs), spec.get("replicas", 1), status.get("replicas") or 0, status.get("readyReplicas") or 0,
            _age(rs, now), *_template_cells(spec)]


# --- Cluster objects --------------------------------------------------------------------

def _node_roles(labels: Obj) -> str:
    roles = {k.removeprefix("node-role.kubernetes.io/") for k in labels
             if k.startswith("node-role.kubernetes.io/") and k != "node-role.kubernetes.io/"}
    if labels.get("kubernetes.io/role"):
        roles.add(str(labels["kubernetes.io/role"]))
    return ",".join(sorted(roles)) or "<none>"


def _node_cells(n: Obj, now: datetime) -> list[Any]:
    status, spec = n.get("status") or {}, n.get("spec") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    states = ["Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []
    internal = next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), None)
    external = next((a.get("address") for a in addresses if a.get("type") == "ExternalIP"), None)
    return [_name(n), ",".join(states), _node_roles(_meta(n).get("labels") or {}), _age(n, now),
            info.get("kubeletVersion") or "", internal or "<none>", external or "<none>",
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def _event_cells(e: Obj, now: datetime) -> list[Any]:
    first = _since(e.get("firstTimestamp"), now) if e.get("firstTimestamp") else _since(e.get("eventTime"), now)
    last = _since(e.get("lastTimestamp"), now) if e.get("lastTimestamp") else first
    count = int(e.get("count") or 0)
    series = e.get("series")
    if series:
        last, count = _since(series.get("lastObservedTime"), now), int(series.get("count") or 0)
    elif count == 0:
        count = 1
    inv = e.get("involvedObject") or {}
    kind = str(inv.get("kind") or "").lower()
    target = f"{kind}/{inv['name']}" if inv.get("name") else kind
    source = e.get("source") or {}
    component = source.get("component") or e.get("reportingComponent") or e.get("reportingController") or ""
    instance = source.get("host") or e.get("reportingInstance") or ""
    return [last, e.get("type") or "", e.get("reason") or "", target, inv.get("fieldPath") or "",
            f"{component}, {instance}" if instance else component, str(e.get("message") or "").strip(), first,
            count, _name(e)]


def _subjects(binding: Obj) -> list[str]:
    """rbac.SubjectsStrings: users, groups and namespace/name service accounts, each `, `-joined."""
    users, groups, accounts = [], [], []
    for s in binding.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(str(s.get("name")))
        elif s.get("kind") == "Group":
            groups.append(str(s.get("name")))
        elif s.get("kind") == "ServiceAccount":
            accounts.append(f"{s.get('namespace') or ''}/{s.get('name')}")
    return [", ".join(users), ", ".join(groups), ", ".join(accounts)]


def _binding_cells(b: Obj, now: datetime) -> list[Any]:
    ref = b.get("roleRef") or {}
    return [_name(b), f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(b, now), *_subjects(b)]


def _quota_cells(q: Obj, now: datetime) -> list[Any]:
    status = q.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        column = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [_name(q), _age(q, now), ", ".join(requests), ", ".join(limits)]


def _priority_class_cells(pc: Obj, now: datetime) -> list[Any]:
    return [_name(pc), int(pc.get("value") or 0), bool(pc.get("globalDefault")), _age(pc, now),
            pc.get("preemptionPolicy") or ""]


def _created_at_cells(obj: Obj, _now: datetime) -> list[Any]:
    t = _time(_meta(obj).get("creationTimestamp"))
    return [_name(obj), t.strftime("%Y-%m-%dT%H:%M:%SZ") if t else "0001-01-01T00:00:00Z"]


def _pdb_cells(pdb: Obj, now: datetime) -> list[Any]:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    budget = [str(spec[f]) if spec.get(f) is not None else "N/A" for f in ("minAvailable", "maxUnavailable")]
    return [_name(pdb), *budget, int(status.get("disruptionsAllowed") or 0), _age(pdb, now)]


# --- Registry ---------------------------------------------------------------------------

_NAME = Column("Name", format="name", description="Name must be unique within a namespace.")
_AGE = Column("Age", description="The time since the object was created.")
_WIDE_TEMPLATE = (Column("Containers", priority=1, description="Names of each container in the template."),
                  Column("Images", priority=1, description="Images referenced by each container in the template."),
                  Column("Selector", priority=1, description="Label selector over the pods."))
_BINDING_COLUMNS = (_NAME, Column("Role", description="The role referenced."), _AGE,
                    Column("Users", priority=1, description="Users in the binding"),
                    Column("Groups", priority=1, description="Groups in the binding"),
                    Column("ServiceAccounts", priority=1, description="ServiceAccounts in the binding"))
_DEFAULT = Printer((_NAME, Column("Created At", "date", description="The time the object was created.")),
                   _created_at_cells)


def _simple(*columns: Column, cells: Cells) -> Printer:
    return Printer((_NAME, *columns), cells)


PRINTERS: dict[str, Printer] = {
    "Pod": Printer((_NAME, Column("Ready", description="The aggregate readiness of the pod's containers."),
                    Column("Status", description="The aggregate status of the containers in this pod."),
                    Column("Restarts", description="Container restarts, and how long ago the last one was."),
                    _AGE, Column("IP", priority=1, description="The pod's IP address."),
                    Column("Node", priority=1, description="The node the pod is bound to."),
                    Column("Nominated Node", priority=1, description="The node the scheduler nominated."),
                    Column("Readiness Gates", priority=1, description="Readiness gates that are true.")),
                   _pod_cells, _pod_conditions),
    "Deployment": _simple(Column("Ready", description="Ready pods out of the desired replicas."),
                          Column("Up-to-date", description="Replicas with the current template."),
                          Column("Available", description="Replicas available to users."), _AGE, *_WIDE_TEMPLATE,
                          cells=_deployment_cells),
    "ReplicaSet": _simple(Column("Desired", "integer", description="Desired replicas."),
                          Column("Current", "integer", description="Observed replicas."),
                          Column("Ready", "integer", description="Ready replicas."), _AGE, *_WIDE_TEMPLATE,
                          cells=_replicaset_cells),
    "Node": _simple(Column("Status", description="The status of the node"),
                    Column("Roles", description="The roles of the node"), _AGE,
                    Column("Version", description="Kubelet version."),
                    Column("Internal-IP", priority=1, description="The node's internal address."),
                    Column("External-IP", priority=1, description="The node's external address."),
                    Column("OS-Image", priority=1, description="The OS image reported by the node."),
                    Column("Kernel-Version", priority=1, description="The kernel version reported by the node."),
                    Column("Container-Runtime", priority=1, description="The container runtime and its version."),
                    cells=_node_cells),
    "Namespace": _simple(Column("Status", description="The status of the namespace"), _AGE,
                         cells=lambda o, now: [_name(o), (o.get("status") or {}).get("phase") or "", _age(o, now)]),
    "Event": Printer((Column("Last Seen", description="The time of the most recent occurrence."),
                      Column("Type", description="Normal or Warning."),
                      Column("Reason", description="Why the event happened."),
                      Column("Object", description="The object the event is about."),
                      Column("Subobject", priority=1, description="The field of the object the event is about."),
                      Column("Source", priority=1, description="The component reporting the event."),
                      Column("Message", description="A human-readable description."),
                      Column("First Seen", priority=1, description="The time of the first occurrence."),
                      Column("Count", priority=1, description="How often the event occurred."),
                      Column("Name", priority=1, format="name", description="The event's name.")), _event_cells),
    "ConfigMap": _simple(Column("Data", description="Number of data and binaryData keys."), _AGE,
                         cells=lambda o, now: [_name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                                               _age(o, now)]),
    "Secret": _simple(Column("Type", description="The secret's type."),
                      Column("Data", description="Number of data keys."), _AGE,
                      cells=lambda o, now: [_name(o), o.get("type") or "Opaque", len(o.get("data") or {}),
                                            _age(o, now)]),
    "ServiceAccount": _simple(Column("Secrets", description="Number of secrets the account lists."), _AGE,
                              cells=lambda o, now: [_name(o), len(o.get("secrets") or []), _age(o, now)]),
    "Lease": _simple(Column("Holder", description="The identity holding the lease."), _AGE,
                     cells=lambda o, now: [_name(o), (o.get("spec") or {}).get("holderIdentity") or "",
                                           _age(o, now)]),
    "RoleBinding": Printer(_BINDING_COLUMNS, _binding_cells),
    "ClusterRoleBinding": Printer(_BINDING_COLUMNS, _binding_cells),
    "ResourceQuota": _simple(_AGE, Column("Request", description="Used/hard for each request quota."),
                             Column("Limit", description="Used/hard for each limits.* quota."),
                             cells=_quota_cells),
    "PriorityClass": _simple(Column("Value", "integer", description="The priority pods of this class get."),
                             Column("Global-Default", "boolean", description="Whether pods without a class get it."),
                             _AGE, Column("PreemptionPolicy", description="Whether pods may preempt lower ones."),
                             cells=_priority_class_cells),
    "PodDisruptionBudget": _simple(
        Column("Min Available", description="The minimum number of pods that must be available."),
        Column("Max Unavailable", description="The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", "integer", description="Calculated number of pods that may be disrupted now."),
        _AGE, cells=_pdb_cells),
}
"""Kind -> printer; any other kind gets the generic `Name, Created At` table."""


def _row(printer: Printer, obj: Obj, now: datetime, include_object: str) -> Obj:
    if include_object == "Object":
        embedded: Obj | None = obj
    elif include_object == "None":
        embedded = None
    else:
        embedded = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": _meta(obj)}
    row: Obj = {"cells": printer.cells(obj, now), "object": embedded}
    conditions = printer.conditions(obj) if printer.conditions else []
    if conditions:
        row["conditions"] = conditions
    return row


_CUSTOM_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
               "description": "CreationTimestamp is a timestamp representing the server time when this object was "
                              "created."}


def _custom_cell(column: Obj, obj: Obj, now: datetime) -> Any:
    """One additionalPrinterColumns cell, as upstream's CRD table convertor fills it (None when absent)."""
    try:
        values = evaluate(str(column.get("jsonPath") or ""), obj)
    except (JSONPathError, ValueError, TypeError):
        return None
    if not values or values[0] is None:
        return None
    value = values[0] if len(values) == 1 else values
    kind = column.get("type")
    if kind == "date" and isinstance(value, str):
        return _since(value, now) if _time(value) else value
    if kind in ("integer", "number", "boolean") and not isinstance(value, (dict, list)):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return value if isinstance(value, str) else json.dumps(value)


def custom_printer(columns: tuple[Obj, ...]) -> Printer:
    """The printer of a custom resource: Name, then its additionalPrinterColumns (Age when it has none)."""
    chosen = columns or (_CUSTOM_AGE,)
    cols = (_NAME, *(Column(str(c.get("name")), str(c.get("type") or "string"), int(c.get("priority") or 0),
                            str(c.get("description") or ""), str(c.get("format") or "")) for c in chosen))
    return Printer(cols, lambda o, now: [_name(o), *(_custom_cell(c, o, now) for c in chosen)])


def to_table(kind: str, items: list[Obj], *, list_meta: Obj | None = None, include_object: str = "Metadata",
             now: datetime | None = None, printer: Printer | None = None) -> Obj:
    """The Table of `items` (all of `kind`, or printed by `printer`); `include_object` is the request's
    includeObject."""
    printer = printer or PRINTERS.get(kind, _DEFAULT)
    at = now or datetime.now(UTC)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": dict(list_meta or {}),
            "columnDefinitions": [{"name": c.name, "type": c.type, "format": c.format,
                                   "description": c.description, "priority": c.priority}
                                  for c in printer.columns],
            "rows": [_row(printer, obj, at, include_object) for obj in items]}


from apiserver.endpoints.service_tables import SERVICE_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(SERVICE_PRINTERS)

from apiserver.endpoints.daemonset_tables import DAEMONSET_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(DAEMONSET_PRINTERS)
from apiserver.endpoints.workload_tables import WORKLOAD_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(WORKLOAD_PRINTERS)
from apiserver.endpoints.job_tables import JOB_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(JOB_PRINTERS)
from apiserver.endpoints.cronjob_tables import CRONJOB_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(CRONJOB_PRINTERS)
from apiserver.endpoints.storage_tables import STORAGE_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(STORAGE_PRINTERS)
from apiserver.endpoints.csr_tables import CSR_PRINTERS  # noqa: E402 - it builds on the names above

PRINTERS.update(CSR_PRINTERS)
