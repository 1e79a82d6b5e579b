"""Plan the EndpointSlice writes that bring one Service's slices in line with its pods.

Mirrors k8s.io/endpointslice reconciler.go (Reconcile, reconcileByAddressType,
reconcileByPortMapping, finalize), as a pure function over wire dicts:
1. slices of an address type the Service no longer has, or not owned by this very Service
   (same name, older uid), are deleted;
2. the desired endpoints are grouped by their resolved port set, one group per set of
   slices; a pod on a Node that does not exist is left out (and reported, so the Service is
   retried) unless publishNotReadyAddresses asks for every address;
3. per group, existing slices keep the endpoints still desired (updated where they
   changed), slices left empty are deleted, and the rest is packed with the least churn:
   first into slices being updated anyway (fullest first), then into the one unchanged
   slice it fits best, then into new slices of at most `max_endpoints` each;
4. a Service with no endpoints at all keeps exactly one empty placeholder slice;
5. a slice to create and one to delete become one update of the latter.
Guarantee: when the existing slices already say what the pods say, the plan is empty, so
a steady state writes nothing.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controllers.common.endpoints import should_pod_be_in_endpoints
from controllers.endpointslice.desired import (
    address_types_for_service,
    endpoint_key,
    endpoint_ports,
    endpoints_equal,
    new_slice,
    owned_by,
    pod_to_endpoint,
    port_map_key,
    slice_labels,
)
from kube.api import Node, Pod, Service

__all__ = ["SlicePlan", "plan_slices"]

Slice = dict[str, Any]


@dataclass
class SlicePlan:
    """What to write: bodies to create and to update (with the resourceVersion read), slices to delete."""

    create: list[Slice] = field(default_factory=list)
    update: list[Slice] = field(default_factory=list)
    delete: list[Slice] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.create or self.update or self.delete)


def plan_slices(*, service: Service, pods: list[Pod], existing: list[Slice],
                node_for: Callable[[str], Node | None], max_endpoints: int) -> SlicePlan:
    """The writes for one Service (see the module doc); pure, reads only its arguments."""
    plan = SlicePlan()
    supported = address_types_for_service(service)
    by_type: dict[str, list[Slice]] = {t: [] for t in supported}
    for s in existing:
        if s.get("addressType") in by_type:
            by_type[s["addressType"]].append(s)
        else:
            plan.delete.append(s)
    for address_type, slices in by_type.items():
        part = _plan_address_type(service, pods, slices, address_type, node_for, max_endpoints)
        plan.errors.extend(part.errors)
        _merge_creates_into_deletes(service, part)
        plan.create.extend(part.create)
        plan.update.extend(part.update)
        plan.delete.extend(part.delete)
    return plan


def _plan_address_type(service: Service, pods: list[Pod], existing: list[Slice], address_type: str,
                       node_for: Callable[[str], Node | None], max_endpoints: int) -> SlicePlan:
    plan = SlicePlan()
    existing_by_ports: dict[str, list[Slice]] = {}
    for s in existing:
        if owned_by(s, service):
            existing_by_ports.setdefault(port_map_key(s.get("ports")), []).append(s)
        else:
            plan.delete.append(s)
    desired: dict[str, dict[str, dict[str, Any]]] = {}
    ports_of: dict[str, list[dict[str, Any]]] = {}
    for pod in sorted(pods, key=lambda p: p.metadata.name or ""):
        if not should_pod_be_in_endpoints(pod, include_terminating=True):
            continue
        ports = endpoint_ports(service, pod)
        key = port_map_key(ports)
        group = desired.setdefault(key, {})
        ports_of.setdefault(key, ports)
        node = node_for(pod.spec.node_name or "")
        if node is None and not service.spec.publish_not_ready_addresses:
            plan.errors.append(f"skipping Pod {pod.metadata.name} for Service {service.key}: "
                               f"Node {pod.spec.node_name or ''} Not Found")
            continue
        endpoint = pod_to_endpoint(pod, node, service, address_type)
        if endpoint["addresses"]:
            group[endpoint_key(endpoint)] = endpoint
    for key, endpoints in desired.items():
        _pack(service, existing_by_ports.get(key, []), endpoints,
              new=functools.partial(new_slice, service, address_type=address_type, ports=ports_of[key]),
              max_endpoints=max_endpoints, plan=plan)
    for key, slices in existing_by_ports.items():
        if key not in desired:
            plan.delete.extend(slices)
    if len(existing) == len(plan.delete) and not plan.create:
        placeholder = new_slice(service, address_type=address_type, ports=[])
        if len(plan.delete) == 1 and _same_placeholder(plan.delete[0], placeholder):
            plan.delete = []
        else:
            plan.create.append(placeholder)
    return plan


def _pack(service: Service, existing: list[Slice], desired: dict[str, dict[str, Any]], *,
          new: Callable[[], Slice], max_endpoints: int, plan: SlicePlan) -> None:
    """Reconcile one port group's slices with its desired endpoints (upstream reconcileByPortMapping)."""
    by_name: dict[str, Slice] = {}
    unchanged: list[str] = []
    to_update: list[str] = []
    for s in existing:
        name = s["metadata"]["name"]
        by_name[name] = s
        kept, changed = [], False
        for ep in s.get("endpoints") or []:
            want = desired.pop(endpoint_key(ep), None)
            if want is not None:
                kept.append(want)
                changed = changed or not endpoints_equal(want, ep)
        labels, _ = slice_labels(s["metadata"].get("labels"), service)
        if changed or len(kept) != len(s.get("endpoints") or []):
            if not kept:
                plan.delete.append(s)
                continue
            by_name[name] = _with(s, endpoints=kept, labels=labels)
            to_update.append(name)
        elif labels != (s["metadata"].get("labels") or {}):
            by_name[name] = _with(s, endpoints=s.get("endpoints") or [], labels=labels)
            to_update.append(name)
        else:
            unchanged.append(name)
    # Fill the slices being written anyway, fullest first.
    for name in sorted(to_update, key=lambda n: -len(by_name[n]["endpoints"])):
        _fill(by_name[name], desired, max_endpoints)
    while desired:
        target: Slice | None = None
        if len(desired) < max_endpoints and unchanged:
            target = _slice_to_fill([by_name[n] for n in unchanged], len(desired), max_endpoints)
        if target is None:
            target = new()
        else:
            target = _with(target, endpoints=list(target.get("endpoints") or []), labels=target["metadata"]["labels"])
            name = target["metadata"]["name"]
            by_name[name] = target
            unchanged.remove(name)
            to_update.append(name)
        _fill(target, desired, max_endpoints)
        if not target["metadata"].get("name"):
            plan.create.append(target)
    plan.update.extend(by_name[n] for n in to_update)


def _with(s: Slice, *, endpoints: list[dict[str, Any]], labels: dict[str, str]) -> Slice:
    out = copy.deepcopy(s)
    out["endpoints"] = endpoints
    out["metadata"]["labels"] = labels
    return out


def _fill(s: Slice, desired: dict[str, dict[str, Any]], max_endpoints: int) -> None:
    endpoints = s.setdefault("endpoints", [])
    while desired and len(endpoints) < max_endpoints:
        endpoints.append(desired.pop(next(iter(desired))))


def _slice_to_fill(slices: list[Slice], count: int, max_endpoints: int) -> Slice | None:
    """The unchanged slice that `count` more endpoints would leave closest to full, if any fits."""
    best: Slice | None = None
    closest = max_endpoints
    for s in slices:
        room = max_endpoints - (count + len(s.get("endpoints") or []))
        if 0 <= room < closest:
            best, closest = s, room
    return best


def _same_placeholder(s: Slice, placeholder: Slice) -> bool:
    meta, want = s.get("metadata") or {}, placeholder["metadata"]
    return (meta.get("namespace") == want["namespace"] and (meta.get("labels") or {}) == want["labels"]
            and (meta.get("ownerReferences") or []) == want["ownerReferences"]
            and s.get("addressType") == placeholder["addressType"]
            and not s.get("endpoints") and not s.get("ports"))


def _merge_creates_into_deletes(service: Service, plan: SlicePlan) -> None:
    """Turn a create plus a delete into one update of the slice that would be deleted (upstream finalize)."""
    remaining: list[Slice] = []
    for doomed in plan.delete:
        if plan.create and doomed.get("addressType") == plan.create[-1]["addressType"] and owned_by(doomed, service):
            body = plan.create.pop()
            meta = copy.deepcopy(doomed["metadata"])
            meta["labels"] = body["metadata"]["labels"]
            meta["ownerReferences"] = body["metadata"]["ownerReferences"]
            plan.update.append({**body, "metadata": meta})
        else:
            remaining.append(doomed)
    plan.delete = remaining
