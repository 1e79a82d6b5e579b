"""Checks every served kind gets from its schema: required fields, enumerations, quantities.

Upstream validates built-in kinds by hand, field by field; most of those checks follow from
facts the OpenAPI schema records, so one walk over the object with its schema gives every
kind the common ones, worded as upstream words them:
- a field the schema lists as `required` is present (`Required value`), in `status` and
  `metadata` too: a stored object missing one (a node condition without `type`, an owner
  reference without `uid`) would fail every typed client that lists it, since those
  clients, as the official Python one, refuse a model without its required fields (the
  status object's own fields excepted: its writer fills them as it goes);
- a field with a closed set of values (the `+enum` types of k8s.io/api, listed in `ENUMS`
  by definition and property, in the order upstream's messages list them) holds one of them
  (`Unsupported value: "Bogus": supported values: "Equal", "Exists"`); an empty string is
  left to defaulting and to the kind's own validation;
- a resource quantity is well formed and fits the int64 it is accounted in.
Types and integer ranges are checked earlier, when the body is decoded. Kinds' hand-written
validation runs beside this and wins at a field it reports on (see `merge_errors`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apiserver.openapi.schema import SchemaNode, definition_name
from apiserver.validation.field import invalid, not_supported, required
from kube.errors import FieldError
from kube.quantity import parse_quantity

__all__ = ["ENUMS", "QUANTITY_FORMAT_MSG", "merge_errors", "schema_errors"]

Obj = dict[str, Any]

_CORE = "io.k8s.api.core.v1."
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PREEMPTION = ("Never", "PreemptLowerPriority")
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    (_CORE + "PodSpec", "restartPolicy"): ("Always", "OnFailure", "Never"),
    (_CORE + "PodSpec", "dnsPolicy"): ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"),
    (_CORE + "PodSpec", "preemptionPolicy"): _PREEMPTION,
    (_CORE + "Container", "imagePullPolicy"): ("Always", "IfNotPresent", "Never"),
    (_CORE + "Container", "terminationMessagePolicy"): ("FallbackToLogsOnError", "File"),
    (_CORE + "EphemeralContainer", "imagePullPolicy"): ("Always", "IfNotPresent", "Never"),
    (_CORE + "EphemeralContainer", "terminationMessagePolicy"): ("FallbackToLogsOnError", "File"),
    (_CORE + "ContainerPort", "protocol"): ("SCTP", "TCP", "UDP"),
    (_CORE + "HTTPGetAction", "scheme"): ("HTTP", "HTTPS"),
    (_CORE + "Toleration", "operator"): ("Equal", "Exists"),
    (_CORE + "Toleration", "effect"): _EFFECTS,
    (_CORE + "Taint", "effect"): _EFFECTS,
    (_CORE + "TopologySpreadConstraint", "whenUnsatisfiable"): ("DoNotSchedule", "ScheduleAnyway"),
    ("io.k8s.api.scheduling.v1.PriorityClass", "preemptionPolicy"): _PREEMPTION,
}
QUANTITY_FORMAT_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_INT64_MAX = (1 << 63) - 1
_SKIPPED_TOP = frozenset({"apiVersion", "kind"})


def schema_errors(obj: Obj, node: SchemaNode) -> list[FieldError]:
    """Every required, enum and quantity error in `obj`."""
    errs: list[FieldError] = []
    _check_object({k: v for k, v in obj.items() if k not in _SKIPPED_TOP | {"status"}}, node, "", errs, top=True)
    if isinstance(obj.get("status"), dict):
        # The status object's own scalars (a ReplicaSet's replicas) are its writers' to fill, as Go's
        # encoder always writes them; the objects inside it (conditions, addresses) are checked.
        _check_object(obj["status"], node.field("status"), "status", errs, top=True)
    return errs


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_object(obj: Obj, node: SchemaNode, path: str, errs: list[FieldError], *, top: bool = False) -> None:
    name = definition_name(node)
    if not top:
        for field in node.schema.get("required") or []:
            if obj.get(field) is None:
                errs.append(required(_join(path, field)))
    props = node.schema.get("properties")
    extra = node.schema.get("additionalProperties")
    for key, value in obj.items():
        if props and key in props:
            child_path = _join(path, key)
        elif isinstance(extra, dict):
            child_path = f"{path}[{key}]"
        else:
            continue
        allowed = ENUMS.get((name, key)) if name else None
        if allowed is not None and isinstance(value, str) and value and value not in allowed:
            errs.append(not_supported(child_path, value, allowed))
        _check_value(value, node.field(key), child_path, errs)


def _check_value(value: Any, node: SchemaNode, path: str, errs: list[FieldError]) -> None:
    if not node.known or value is None:
        return
    if node.schema.get("_quantity"):
        _check_quantity(value, path, errs)
    elif isinstance(value, dict) and node.type == "object":
        _check_object(value, node, path, errs)
    elif isinstance(value, list) and node.type == "array":
        item = node.items()
        for i, v in enumerate(value):
            _check_value(v, item, f"{path}[{i}]", errs)


def _check_quantity(value: Any, path: str, errs: list[FieldError]) -> None:
    try:
        amount = parse_quantity(value)
    except (ValueError, TypeError, ArithmeticError):
        errs.append(invalid(path, value, QUANTITY_FORMAT_MSG))
        return
    # Every reader accounts a quantity in an int64 of its unit; a larger one cannot be honoured.
    if abs(amount) > Decimal(_INT64_MAX):
        errs.append(invalid(path, value, f"must be less than or equal to {_INT64_MAX}"))


def merge_errors(specific: list[FieldError], generic: list[FieldError]) -> list[FieldError]:
    """The kind's own errors, then the schema's at fields the kind said nothing about."""
    spoken = {e.field for e in specific}
    out = list(specific)
    seen = {(e.field, e.message) for e in specific}
    for e in generic:
        if e.field not in spoken and (e.field, e.message) not in seen:
            out.append(e)
            seen.add((e.field, e.message))
    return out
