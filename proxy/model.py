"""The proxy's desired state: every service port and the endpoints new connections may go to.

A pure function of the Services and EndpointSlices the proxy watches (their wire dicts), so
the iptables backend, the simulated backend and the tests all see the same thing. Mirrors
kube-proxy's `ServicePortMap` and `EndpointsMap` (pkg/proxy/serviceport.go, endpoints.go,
endpointslicecache.go) and the endpoint choice of pkg/proxy/topology.go:

- a Service gets rules for each of its ports when it has a cluster IP (types ClusterIP,
  NodePort and LoadBalancer); headless (`clusterIP: None`) and ExternalName Services get none;
- a port's endpoints come from the slices labelled `kubernetes.io/service-name` in the same
  namespace whose port has the same name and protocol; an address listed by several slices
  counts once (ready if any slice says so);
- only ready endpoints (`conditions.ready` true, or unset) take new connections; when there
  are none, endpoints that are serving and terminating do, as upstream's
  ProxyTerminatingEndpoints; a port with neither has no endpoints (its traffic is rejected);
- with `externalTrafficPolicy: Local`, NodePort and external-IP traffic goes only to the
  endpoints on this proxy's nodes (`local_nodes`), chosen by the same rule.

Everything here is immutable and ordered (by namespace, name, port name, protocol), so two
models of the same objects compare equal and render the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "SERVICE_NAME_LABEL",
    "Endpoint",
    "ProxyModel",
    "ServicePort",
    "ServicePortName",
    "build_model",
    "service_ports",
    "slice_endpoints",
    "usable_endpoints",
]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
PROXIED_TYPES = frozenset({"ClusterIP", "NodePort", "LoadBalancer"})
DEFAULT_AFFINITY_TIMEOUT = 10800  # seconds, upstream's sessionAffinityConfig.clientIP default


@dataclass(frozen=True, order=True)
class ServicePortName:
    """`namespace/name:port`, the name kube-proxy gives a service port (`:port` only when named)."""

    namespace: str
    name: str
    port: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" + (f":{self.port}" if self.port else "")


@dataclass(frozen=True, order=True)
class Endpoint:
    """One backend address of a service port and its conditions."""

    ip: str
    port: int
    ready: bool = True
    serving: bool = True
    terminating: bool = False
    node_name: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.ip}:{self.port}"


@dataclass(frozen=True)
class ServicePort:
    """What the proxy programs for one port of one Service.

    `endpoints` take cluster traffic (ClusterIP, and NodePort under the Cluster policy);
    `local_endpoints` is set only under `externalTrafficPolicy: Local` and takes NodePort
    and external-IP traffic. `affinity_seconds` is the ClientIP session affinity timeout
    (None: no affinity).
    """

    name: ServicePortName
    protocol: str
    cluster_ip: str
    port: int
    node_port: int | None = None
    external_ips: tuple[str, ...] = ()
    affinity_seconds: int | None = None
    endpoints: tuple[Endpoint, ...] = ()
    local_endpoints: tuple[Endpoint, ...] | None = None

    @property
    def external_local(self) -> bool:
        return self.local_endpoints is not None


@dataclass(frozen=True)
class ProxyModel:
    """Every programmed service port, ordered."""

    service_ports: tuple[ServicePort, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the status file and the simulated mode report."""
        return {"servicePorts": [_port_dict(sp) for sp in self.service_ports]}


def _port_dict(sp: ServicePort) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": str(sp.name), "protocol": sp.protocol, "clusterIP": sp.cluster_ip,
                           "port": sp.port, "endpoints": [str(e) for e in sp.endpoints]}
    if sp.node_port:
        doc["nodePort"] = sp.node_port
    if sp.external_ips:
        doc["externalIPs"] = list(sp.external_ips)
    if sp.affinity_seconds is not None:
        doc["sessionAffinitySeconds"] = sp.affinity_seconds
    if sp.local_endpoints is not None:
        doc["localEndpoints"] = [str(e) for e in sp.local_endpoints]
    return doc


def service_ports(service: Mapping[str, Any]) -> list[ServicePort]:
    """The service ports of one Service dict, without endpoints; [] when it is not proxied."""
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    cluster_ip = spec.get("clusterIP") or ""
    if spec.get("type", "ClusterIP") not in PROXIED_TYPES or cluster_ip in ("", "None") or ":" in cluster_ip:
        return []  # headless, ExternalName, not yet allocated, or IPv6 (not programmed)
    affinity = None
    if spec.get("sessionAffinity") == "ClientIP":
        client_ip = (spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}
        affinity = int(client_ip.get("timeoutSeconds") or DEFAULT_AFFINITY_TIMEOUT)
    ports = []
    for p in spec.get("ports") or []:
        ports.append(ServicePort(
            name=ServicePortName(str(meta.get("namespace") or ""), str(meta.get("name") or ""), p.get("name") or ""),
            protocol=str(p.get("protocol") or "TCP"), cluster_ip=cluster_ip, port=int(p["port"]),
            node_port=int(p["nodePort"]) if p.get("nodePort") else None,
            external_ips=tuple(ip for ip in spec.get("externalIPs") or () if ":" not in ip),
            affinity_seconds=affinity))
    return ports


def _condition(conditions: Mapping[str, Any], name: str, default: bool) -> bool:
    value = conditions.get(name)
    return default if value is None else bool(value)


def slice_endpoints(slices: Iterable[Mapping[str, Any]], *, port_name: str, protocol: str) -> list[Endpoint]:
    """Every IPv4 endpoint the slices list for the port `port_name`/`protocol`, each address once, sorted."""
    found: dict[tuple[str, int], Endpoint] = {}
    for s in slices:
        if s.get("addressType", "IPv4") != "IPv4":
            continue
        number = next((p.get("port") for p in s.get("ports") or ()
                       if (p.get("name") or "") == port_name and (p.get("protocol") or "TCP") == protocol), None)
        if number is None:
            continue
        for ep in s.get("endpoints") or ():
            addresses = ep.get("addresses") or ()
            if not addresses:
                continue
            conditions = ep.get("conditions") or {}
            ready = _condition(conditions, "ready", True)
            endpoint = Endpoint(ip=str(addresses[0]), port=int(number), ready=ready,
                                serving=_condition(conditions, "serving", ready),
                                terminating=_condition(conditions, "terminating", False),
                                node_name=ep.get("nodeName"))
            key = (endpoint.ip, endpoint.port)
            if key not in found or (endpoint.ready and not found[key].ready):
                found[key] = endpoint
    return sorted(found.values())


def usable_endpoints(endpoints: Iterable[Endpoint]) -> tuple[Endpoint, ...]:
    """The endpoints new connections go to: the ready ones, else those serving while terminating."""
    candidates = list(endpoints)
    ready = tuple(e for e in candidates if e.ready)
    return ready or tuple(e for e in candidates if e.serving and e.terminating)


def build_model(services: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]], *,
                local_nodes: frozenset[str] = frozenset()) -> ProxyModel:
    """The model for these Service and EndpointSlice dicts; `local_nodes` are the nodes this proxy serves."""
    by_service: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for s in slices:
        meta = s.get("metadata") or {}
        owner = (meta.get("labels") or {}).get(SERVICE_NAME_LABEL)
        if owner:
            by_service.setdefault((str(meta.get("namespace") or ""), owner), []).append(s)
    ports = []
    for service in services:
        local = (service.get("spec") or {}).get("externalTrafficPolicy") == "Local"
        for sp in service_ports(service):
            known = slice_endpoints(by_service.get((sp.name.namespace, sp.name.name), ()),
                                    port_name=sp.name.port, protocol=sp.protocol)
            chosen = usable_endpoints(known)
            on_node = usable_endpoints(e for e in known if e.node_name in local_nodes) if local else None
            ports.append(replace(sp, endpoints=chosen, local_endpoints=on_node))
    return ProxyModel(tuple(sorted(ports, key=lambda sp: (sp.name, sp.protocol))))
