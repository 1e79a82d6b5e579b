"""The desired `subsets` of a Service's core/v1 Endpoints, packed and capped as upstream.

Mirrors pkg/controller/endpoint (podToEndpointAddressForService, addEndpointSubset,
truncateEndpoints) and pkg/api/v1/endpoints RepackSubsets, over wire dicts:
- a pod is one address (its first IP of the Service's IP family) in `addresses` when it is
  Ready or the Service publishes not-ready addresses, else in `notReadyAddresses`;
  terminating pods are left out unless not-ready addresses are published;
- per Service port, the port the pod serves (a named targetPort resolved per pod; a pod
  without it is not an address of that port); a headless Service without ports lists
  addresses with no ports;
- subsets are repacked: one subset per distinct set of addresses, holding every port those
  addresses share, an address ready on a port wins over not ready; everything is sorted,
  so equal inputs give equal output and a steady state compares equal;
- more than `MAX_CAPACITY` addresses are truncated, ready ones first, and say so in the
  `endpoints.kubernetes.io/over-capacity: truncated` annotation.
"""

from __future__ import annotations

import json
import math
from typing import Any

from controllers.common.endpoints import (
    CLUSTER_IP_NONE,
    find_port,
    is_ipv6,
    is_service_ip_set,
    pod_ips,
    should_pod_be_in_endpoints,
    should_set_hostname,
)
from kube.api import Pod, Service

__all__ = ["MAX_CAPACITY", "OVER_CAPACITY_ANNOTATION", "desired_subsets", "subsets_equal", "truncate_subsets"]

MAX_CAPACITY = 1000
"""The most addresses one Endpoints object holds (upstream maxCapacity)."""
OVER_CAPACITY_ANNOTATION = "endpoints.kubernetes.io/over-capacity"

Address = dict[str, Any]
Subset = dict[str, Any]


def pod_address(svc: Service, pod: Pod) -> Address | None:
    """The pod's address for this Service: its first IP of the Service's family, or None."""
    if svc.spec.ip_families:
        want_v6 = svc.spec.ip_families[0] == "IPv6"
    elif is_service_ip_set(svc):
        want_v6 = bool(is_ipv6(svc.spec.cluster_ip or ""))
    else:
        want_v6 = bool(is_ipv6(pod.status.pod_ip or ""))
    ip = next((ip for ip in pod_ips(pod) if is_ipv6(ip) is want_v6), None)
    if ip is None:
        return None
    address: Address = {"ip": ip}
    if should_set_hostname(pod, svc):
        address["hostname"] = pod.spec.hostname
    if pod.spec.node_name:
        address["nodeName"] = pod.spec.node_name
    address["targetRef"] = {"kind": "Pod", "namespace": pod.metadata.namespace, "name": pod.metadata.name,
                            "uid": pod.metadata.uid}
    return address


def _service_port(svc: Service, index: int, number: int) -> dict[str, Any]:
    port = (svc.spec.ports or [])[index]
    out: dict[str, Any] = {"port": number, "protocol": port.protocol or "TCP"}
    if port.name:
        out["name"] = port.name
    if port.app_protocol is not None:
        out["appProtocol"] = port.app_protocol
    return out


def desired_subsets(svc: Service, pods: list[Pod]) -> list[Subset]:
    """The repacked, sorted subsets for the pods a Service selects (not yet truncated)."""
    publish = bool(svc.spec.publish_not_ready_addresses)
    unpacked: list[tuple[Address, bool, dict[str, Any] | None]] = []
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, include_terminating=publish):
            continue
        address = pod_address(svc, pod)
        if address is None:
            continue
        ready = publish or pod.is_ready()
        if not svc.spec.ports:
            if svc.spec.cluster_ip == CLUSTER_IP_NONE:
                unpacked.append((address, ready, None))
            continue
        for i, port in enumerate(svc.spec.ports):
            number = find_port(pod, port)
            if number is not None:
                unpacked.append((address, ready, _service_port(svc, i, number)))
    return _repack(unpacked)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _address_key(address: Address) -> tuple[str, str]:
    return address["ip"], (address.get("targetRef") or {}).get("uid") or ""


def _repack(unpacked: list[tuple[Address, bool, dict[str, Any] | None]]) -> list[Subset]:
    """Group ports by the exact set of addresses (and readiness) that serve them (RepackSubsets)."""
    ports: dict[str, dict[str, Any] | None] = {}
    serving: dict[str, dict[tuple[str, str], tuple[Address, bool]]] = {}
    for address, ready, port in unpacked:
        pk = _key(port)
        ports[pk] = port
        by_address = serving.setdefault(pk, {})
        known = by_address.get(_address_key(address))
        by_address[_address_key(address)] = (address, ready or (known is not None and known[1]))
    groups: dict[str, tuple[dict[tuple[str, str], tuple[Address, bool]], list[dict[str, Any]]]] = {}
    for pk, by_address in serving.items():
        gk = _key(sorted((k, r) for k, (_, r) in by_address.items()))
        group = groups.setdefault(gk, (by_address, []))
        port = ports[pk]
        if port is not None:
            group[1].append(port)
    subsets = [_subset(by_address, group_ports) for by_address, group_ports in groups.values()]
    return sorted(subsets, key=_key)


def _subset(by_address: dict[tuple[str, str], tuple[Address, bool]], ports: list[dict[str, Any]]) -> Subset:
    ordered = [by_address[k] for k in sorted(by_address)]
    subset: Subset = {}
    ready = [a for a, r in ordered if r]
    not_ready = [a for a, r in ordered if not r]
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    if ports:
        subset["ports"] = sorted(ports, key=lambda p: (p.get("name") or "", p["port"], p["protocol"]))
    return subset


def truncate_subsets(subsets: list[Subset]) -> bool:
    """Cap the addresses at MAX_CAPACITY in place, ready ones kept first, each subset in proportion.

    Returns whether anything was cut.
    """
    total_ready = sum(len(s.get("addresses") or []) for s in subsets)
    total_not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if total_ready + total_not_ready <= MAX_CAPACITY:
        return False
    truncate_ready = total_ready > MAX_CAPACITY
    room = MAX_CAPACITY if truncate_ready else MAX_CAPACITY - total_ready
    total = total_ready if truncate_ready else total_not_ready
    left = room
    field = "addresses" if truncate_ready else "notReadyAddresses"
    for s in subsets:
        have = s.get(field) or []
        share = min(math.ceil(len(have) / total * room), left)
        s[field] = have[:share]
        if truncate_ready:
            s.pop("notReadyAddresses", None)
        left -= len(s[field])
        if not s[field]:
            del s[field]
    return True


def _without_ref_versions(subsets: list[Subset]) -> list[Subset]:
    def clean(address: Address) -> Address:
        ref = address.get("targetRef")
        if not ref or "resourceVersion" not in ref:
            return address
        return {**address, "targetRef": {k: v for k, v in ref.items() if k != "resourceVersion"}}

    return [{k: ([clean(a) for a in v] if k in ("addresses", "notReadyAddresses") else v) for k, v in s.items()}
            for s in subsets]


def subsets_equal(a: list[Subset], b: list[Subset]) -> bool:
    """Equal as the controller cares: a pod's resourceVersion in targetRef is ignored."""
    return _without_ref_versions(a) == _without_ref_versions(b)
