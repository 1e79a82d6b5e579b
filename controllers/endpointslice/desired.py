"""The desired pieces of a Service's EndpointSlices: endpoints, ports, labels, a new slice.

Mirrors k8s.io/endpointslice utils.go (podToEndpoint, getEndpointPorts, newEndpointSlice,
setEndpointSliceLabels, getAddressTypesForService). Endpoints and ports are wire dicts
(camelCase, as the API holds them) so that desired and existing compare with `==`:
- an endpoint's conditions: `serving` is the pod's Ready condition, `terminating` its
  deletionTimestamp, `ready` is serving and not terminating, or always with
  publishNotReadyAddresses; it carries nodeName, the node's zone label, the pod's hostname
  when its subdomain names the Service, and a targetRef to the pod;
- a pod's ports are the Service ports resolved on that pod (a named targetPort it lacks is
  left out), so pods with different resolved ports land in different slices;
- a slice's labels are the Service's, plus `kubernetes.io/service-name`, the managed-by
  label and, for a Service without a cluster IP, `service.kubernetes.io/headless`.
"""

from __future__ import annotations

import json
from typing import Any

from controllers.common.endpoints import (
    CLUSTER_IP_NONE,
    LABEL_HEADLESS,
    find_port,
    is_ipv6,
    is_service_ip_set,
    pod_ips,
    should_set_hostname,
)
from kube.api import LABEL_MANAGED_BY, LABEL_SERVICE_NAME, Node, Pod, Service

__all__ = [
    "ADDRESS_TYPE_IPV4",
    "ADDRESS_TYPE_IPV6",
    "CONTROLLER_NAME",
    "LABEL_MANAGED_BY",
    "LABEL_SERVICE_NAME",
    "LABEL_ZONE",
    "address_types_for_service",
    "endpoint_key",
    "endpoint_ports",
    "endpoints_equal",
    "new_slice",
    "owned_by",
    "port_map_key",
    "pod_to_endpoint",
    "slice_labels",
]

ADDRESS_TYPE_IPV4 = "IPv4"
ADDRESS_TYPE_IPV6 = "IPv6"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
"""The managed-by value of the slices this controller owns (others' slices are left alone)."""
LABEL_ZONE = "topology.kubernetes.io/zone"
_RESERVED_LABELS = frozenset({LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS})


def address_types_for_service(svc: Service) -> list[str]:
    """The address types a Service's slices use: from spec.ipFamilies, else its cluster IP's family.

    A headless Service without ipFamilies (not yet defaulted) gets both, as upstream.
    """
    families = svc.spec.ip_families or []
    types = [t for f, t in (("IPv4", ADDRESS_TYPE_IPV4), ("IPv6", ADDRESS_TYPE_IPV6)) if f in families]
    if types:
        return types
    if is_service_ip_set(svc):
        return [ADDRESS_TYPE_IPV6 if is_ipv6(svc.spec.cluster_ip or "") else ADDRESS_TYPE_IPV4]
    return [ADDRESS_TYPE_IPV4, ADDRESS_TYPE_IPV6]


def endpoint_ports(svc: Service, pod: Pod) -> list[dict[str, Any]]:
    """The Service's ports as this pod serves them, in the Service's order."""
    if not svc.spec.ports and svc.spec.cluster_ip == CLUSTER_IP_NONE:
        return []
    out: list[dict[str, Any]] = []
    for port in svc.spec.ports or []:
        number = find_port(pod, port)
        if number is None:
            continue
        entry: dict[str, Any] = {"name": port.name or "", "protocol": port.protocol or "TCP", "port": number}
        if port.app_protocol is not None:
            entry["appProtocol"] = port.app_protocol
        out.append(entry)
    return out


def port_map_key(ports: list[dict[str, Any]] | None) -> str:
    """One key per set of ports, whatever their order (upstream NewPortMapKey)."""
    return json.dumps(sorted(json.dumps(p, sort_keys=True) for p in ports or []))


def pod_to_endpoint(pod: Pod, node: Node | None, svc: Service, address_type: str) -> dict[str, Any]:
    """The endpoint for a pod in slices of `address_type` (its addresses may be empty)."""
    want_v6 = address_type == ADDRESS_TYPE_IPV6
    addresses = [ip for ip in pod_ips(pod) if is_ipv6(ip) is want_v6]
    serving = pod.is_ready()
    terminating = pod.metadata.deletion_timestamp is not None
    ready = bool(svc.spec.publish_not_ready_addresses) or (serving and not terminating)
    endpoint: dict[str, Any] = {
        "addresses": addresses,
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": pod.metadata.namespace, "name": pod.metadata.name,
                      "uid": pod.metadata.uid},
    }
    if should_set_hostname(pod, svc):
        endpoint["hostname"] = pod.spec.hostname
    if pod.spec.node_name:
        endpoint["nodeName"] = pod.spec.node_name
    zone = ((node.metadata.labels or {}).get(LABEL_ZONE) if node is not None else None)
    if zone:
        endpoint["zone"] = zone
    return endpoint


def endpoint_key(endpoint: dict[str, Any]) -> str:
    """What identifies an endpoint across syncs: its addresses, hostname and pod (upstream hashEndpoint)."""
    ref = endpoint.get("targetRef") or {}
    return json.dumps([sorted(endpoint.get("addresses") or []), endpoint.get("hostname") or "",
                       ref.get("namespace") or "", ref.get("name") or ""])


def _without_ref_version(endpoint: dict[str, Any]) -> dict[str, Any]:
    ref = endpoint.get("targetRef")
    if not ref or "resourceVersion" not in ref:
        return endpoint
    return {**endpoint, "targetRef": {k: v for k, v in ref.items() if k != "resourceVersion"}}


def endpoints_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal as the controller cares: a pod's resourceVersion in targetRef is ignored."""
    return _without_ref_version(a) == _without_ref_version(b)


def slice_labels(current: dict[str, str] | None, svc: Service) -> tuple[dict[str, str], bool]:
    """(the labels a slice of `svc` must carry, whether the Service's own labels on it changed)."""
    own = {k: v for k, v in (current or {}).items() if k not in _RESERVED_LABELS}
    wanted = {k: v for k, v in (svc.metadata.labels or {}).items() if k not in _RESERVED_LABELS}
    changed = own != wanted
    if not is_service_ip_set(svc):
        wanted[LABEL_HEADLESS] = ""
    wanted[LABEL_SERVICE_NAME] = svc.metadata.name or ""
    wanted[LABEL_MANAGED_BY] = CONTROLLER_NAME
    return wanted, changed


def owned_by(slice_: dict[str, Any], svc: Service) -> bool:
    """Whether a slice (wire dict) has an owner reference to this very Service (same uid)."""
    return any(ref.get("uid") == svc.metadata.uid and ref.get("kind") == "Service" and ref.get("apiVersion") == "v1"
               for ref in (slice_.get("metadata") or {}).get("ownerReferences") or [])


def new_slice(svc: Service, *, address_type: str, ports: list[dict[str, Any]]) -> dict[str, Any]:
    """A slice to create for `svc` (wire dict, no endpoints yet), named by the server from `<svc>-`."""
    labels, _ = slice_labels(None, svc)
    owner = {"apiVersion": "v1", "kind": "Service", "name": svc.metadata.name, "uid": svc.metadata.uid,
             "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"generateName": f"{svc.metadata.name}-", "namespace": svc.metadata.namespace,
                         "labels": labels, "ownerReferences": [owner]},
            "addressType": address_type, "endpoints": [], "ports": ports}
