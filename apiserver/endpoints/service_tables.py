"""Table printers of Services, Endpoints and EndpointSlices, as kubectl shows them.

Mirrors printService, printEndpoints and printEndpointSlice of Kubernetes'
pkg/printers/internalversion: `NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE` (+ `SELECTOR`
with -o wide), `NAME ENDPOINTS AGE` (the first three `ip:port`, then `+ N more...`) and
`NAME ADDRESSTYPE PORTS ENDPOINTS AGE`. Cells never raise on a malformed object.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.endpoints.tables import _AGE, _NAME, Column, Obj, Printer, _age, _name

__all__ = ["SERVICE_PRINTERS", "format_endpoints", "service_external_ip", "service_ports"]

_MAX_LISTED = 3


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def service_ports(ports: Any) -> str:
    """makePortString: `80/TCP`, `80:30080/TCP`, comma-separated."""
    pieces = []
    for port in _dicts(ports):
        node_port = port.get("nodePort")
        pieces.append(f"{port.get('port')}:{node_port}/{port.get('protocol') or ''}" if node_port else
                      f"{port.get('port')}/{port.get('protocol') or ''}")
    return ",".join(pieces)


def _load_balancer_ips(obj: Obj) -> list[str]:
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress")
    return [str(i.get("ip") or i.get("hostname")) for i in _dicts(ingress) if i.get("ip") or i.get("hostname")]


def service_external_ip(obj: Obj) -> str:
    """getServiceExternalIP: external IPs, load balancer ingress, or the ExternalName."""
    spec = _spec(obj)
    external = [str(ip) for ip in spec.get("externalIPs") or [] if isinstance(spec.get("externalIPs"), list)]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        found = _load_balancer_ips(obj) + external
        return ",".join(found) if found else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def _selector(spec: Obj) -> str:
    selector = spec.get("selector")
    if not isinstance(selector, dict) or not selector:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def _service_cells(obj: Obj, now: datetime) -> list[Any]:
    spec = _spec(obj)
    ips = spec.get("clusterIPs")
    cluster_ip = str(ips[0]) if isinstance(ips, list) and ips else "<none>"
    return [_name(obj), str(spec.get("type") or ""), cluster_ip, service_external_ip(obj),
            service_ports(spec.get("ports")) or "<none>", _age(obj, now), _selector(spec)]


def _join_host_port(ip: str, port: Any) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def format_endpoints(obj: Obj) -> str:
    """formatEndpoints: ready addresses as `ip:port` per port, the first three, then `+ N more...`."""
    subsets = _dicts(obj.get("subsets"))
    if not subsets:
        return "<none>"
    listed: list[str] = []
    count, more = 0, False
    for subset in subsets:
        addresses = [str(a.get("ip") or "") for a in _dicts(subset.get("addresses"))]
        ports: list[Obj | None] = list(_dicts(subset.get("ports"))) or [None]  # headless: no ports
        for port in ports:
            count += len(addresses)
            for ip in addresses:
                if len(listed) == _MAX_LISTED:
                    more = True
                    break
                listed.append(ip if port is None else _join_host_port(ip, port.get("port")))
    text = ",".join(listed)
    return f"{text} + {count - _MAX_LISTED} more..." if more else text


def _more(listed: list[str], count: int) -> str:
    text = ",".join(listed)
    if count > _MAX_LISTED:
        return f"{text} + {count - _MAX_LISTED} more..."
    return text or "<unset>"


def _slice_cells(obj: Obj, now: datetime) -> list[Any]:
    ports = _dicts(obj.get("ports"))
    port_texts = [str(p["port"]) if p.get("port") is not None else
                  (str(p["name"]) if p.get("name") is not None else "*") for p in ports]
    addresses = [str(a) for e in _dicts(obj.get("endpoints")) for a in e.get("addresses") or []
                 if isinstance(e.get("addresses"), list)]
    return [_name(obj), str(obj.get("addressType") or ""), _more(port_texts[:_MAX_LISTED], len(port_texts)),
            _more(addresses[:_MAX_LISTED], len(addresses)), _age(obj, now)]


SERVICE_PRINTERS: dict[str, Printer] = {
    "Service": Printer((_NAME, Column("Type", description="How the service is exposed."),
                        Column("Cluster-IP", description="The IP address of the service within the cluster."),
                        Column("External-IP", description="Addresses outside the cluster that reach the service."),
                        Column("Port(s)", description="The ports the service exposes."), _AGE,
                        Column("Selector", priority=1, description="The labels of the pods the service routes to.")),
                       _service_cells),
    "Endpoints": Printer((_NAME, Column("Endpoints", description="The ready addresses and ports."), _AGE),
                         lambda o, now: [_name(o), format_endpoints(o), _age(o, now)]),
    "EndpointSlice": Printer((_NAME, Column("AddressType", description="The type of the addresses."),
                              Column("Ports", description="The ports of the endpoints."),
                              Column("Endpoints", description="The addresses of the endpoints."), _AGE),
                             _slice_cells),
}
