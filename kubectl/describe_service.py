"""`pkctl describe service`: kubectl's layout of a Service, with its ready endpoints per port.

Mirrors kubectl's ServiceDescriber: selector, type, IP families, cluster IPs, each port with
its target port, node port and the ready endpoints (from the Service's EndpointSlices,
`ip:port`, the first three then `+ N more...`), session affinity and traffic policies.
"""

from __future__ import annotations

from typing import Any

from kubectl.describe_text import Section

__all__ = ["describe_service", "format_slice_endpoints"]

Obj = dict[str, Any]
_MAX_LISTED = 3


def _selector(selector: Any) -> str:
    if not isinstance(selector, dict) or not selector:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def format_slice_endpoints(slices: list[Obj], port_name: str) -> str:
    """formatEndpointSlices: ready `ip:port` of the named port across slices; `<none>` when there is none."""
    listed: list[str] = []
    count = 0
    for eps in slices:
        ports = [p for p in eps.get("ports") or [] if (p.get("name") or "") == port_name]
        ready = [e for e in eps.get("endpoints") or [] if (e.get("conditions") or {}).get("ready") is not False]
        for port in ports or ([None] if not eps.get("ports") else []):
            for endpoint in ready:
                for address in endpoint.get("addresses") or []:
                    count += 1
                    if len(listed) < _MAX_LISTED:
                        host = f"[{address}]" if ":" in str(address) else str(address)
                        listed.append(host if port is None else f"{host}:{port.get('port')}")
    if not listed:
        return "<none>"
    text = ",".join(listed)
    return f"{text} + {count - _MAX_LISTED} more..." if count > _MAX_LISTED else text


def describe_service(s: Section, svc: Obj, slices: list[Obj]) -> None:
    """The Service's fields after its metadata (which the caller wrote)."""
    spec = svc.get("spec") or {}
    s.field("Selector", _selector(spec.get("selector")))
    s.field("Type", spec.get("type"))
    if spec.get("ipFamilyPolicy"):
        s.field("IP Family Policy", spec["ipFamilyPolicy"])
    s.field("IP Families", ",".join(spec.get("ipFamilies") or []) or "<none>")
    s.field("IP", spec.get("clusterIP") or "")
    s.field("IPs", ",".join(spec.get("clusterIPs") or []) or "<none>")
    if spec.get("externalIPs"):
        s.field("External IPs", ",".join(spec["externalIPs"]))
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if ingress:
        s.field("LoadBalancer Ingress", ", ".join(str(i.get("ip") or i.get("hostname") or "") for i in ingress))
    if spec.get("type") == "ExternalName":
        s.field("External Name", spec.get("externalName"))
    for port in spec.get("ports") or []:
        name = port.get("name") or "<unset>"
        protocol = port.get("protocol") or ""
        s.field("Port", f"{name}  {port.get('port')}/{protocol}")
        s.field("TargetPort", f"{port.get('targetPort')}/{protocol}")
        if port.get("nodePort"):
            s.field("NodePort", f"{name}  {port['nodePort']}/{protocol}")
        s.field("Endpoints", format_slice_endpoints(slices, port.get("name") or ""))
    s.field("Session Affinity", spec.get("sessionAffinity"))
    if spec.get("externalTrafficPolicy"):
        s.field("External Traffic Policy", spec["externalTrafficPolicy"])
    if spec.get("internalTrafficPolicy"):
        s.field("Internal Traffic Policy", spec["internalTrafficPolicy"])
