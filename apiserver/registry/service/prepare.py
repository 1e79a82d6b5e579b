"""How a Service's server-assigned fields carry over and follow its type, before validation.

Mirrors pkg/registry/core/service/strategy.go (`patchAllocatedValues`, `NormalizeClusterIPs`,
`dropTypeDependentFields`) and the IP family defaulting of the allocator (`initIPFamilyFields`)
for a single-stack cluster:
- a replace that leaves out `clusterIP`/`clusterIPs` or a port's `nodePort` keeps the values
  the server allocated, as long as the type still needs them (`kubectl replace` of a manifest
  never asks for a new address);
- `clusterIP` and `clusterIPs[0]` are kept in step for clients that only know one of them;
- switching to a type that needs no cluster IP (ExternalName) or no node ports (ClusterIP)
  drops the values the user did not change, so the allocator releases them;
- `ipFamilyPolicy` defaults to SingleStack (RequireDualStack for a headless Service without a
  selector, as upstream) and `ipFamilies` to the cluster's family.
All functions work in place on JSON dicts and leave values of the wrong type for validation.
"""

from __future__ import annotations

import ipaddress
from typing import Any

__all__ = ["drop_type_dependent_fields", "init_ip_families", "ip_family_of", "needs_cluster_ip",
           "needs_node_port", "normalize_cluster_ips", "patch_allocated_values"]

Obj = dict[str, Any]


def _spec(svc: Obj) -> Obj:
    spec = svc.get("spec")
    return spec if isinstance(spec, dict) else {}


def needs_cluster_ip(svc: Obj) -> bool:
    return _spec(svc).get("type") != "ExternalName"


def needs_node_port(svc: Obj) -> bool:
    return _spec(svc).get("type") in ("NodePort", "LoadBalancer")


def _ports(svc: Obj) -> list[Obj]:
    ports = _spec(svc).get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _node_ports(svc: Obj) -> list[Any]:
    return [p.get("nodePort") for p in _ports(svc) if p.get("nodePort")]


def patch_allocated_values(new: Obj, old: Obj) -> None:
    """Fill in what a replace left out and the server had allocated (cluster IPs, node ports)."""
    spec, old_spec = _spec(new), _spec(old)
    if needs_cluster_ip(old) and needs_cluster_ip(new):
        if not spec.get("clusterIP") and old_spec.get("clusterIP"):
            spec["clusterIP"] = old_spec["clusterIP"]
        if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
            spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_port(old) and needs_node_port(new):
        used = set(_node_ports(old)) & set(_node_ports(new))
        by_name = {p.get("name") or "": p.get("nodePort") for p in _ports(old)}
        for port in _ports(new):
            if not port.get("nodePort"):
                previous = by_name.get(port.get("name") or "")
                if previous and previous not in used:
                    port["nodePort"] = previous


def normalize_cluster_ips(new: Obj, old: Obj | None) -> None:
    """Keep `clusterIP` and `clusterIPs` in step for clients that set only one of them."""
    spec = _spec(new)
    if not isinstance(new.get("spec"), dict):
        return
    cluster_ip, cluster_ips = spec.get("clusterIP"), spec.get("clusterIPs")
    if old is None:
        if cluster_ip and not cluster_ips:
            spec["clusterIPs"] = [cluster_ip]
        return
    old_spec = _spec(old)
    if old_spec.get("clusterIPs") and not cluster_ips and old_spec.get("clusterIP") == cluster_ip:
        spec["clusterIPs"] = cluster_ips = list(old_spec["clusterIPs"])
    if old_spec.get("clusterIP") != cluster_ip:
        same = (cluster_ips or []) == (old_spec.get("clusterIPs") or [])
        if old_spec.get("clusterIP") and not cluster_ip:
            if same:
                spec.pop("clusterIPs", None)
        elif same:
            spec["clusterIPs"] = [cluster_ip]


def drop_type_dependent_fields(new: Obj, old: Obj) -> None:
    """Wipe what the new type does not use, where the user left it as it was."""
    spec, old_spec = _spec(new), _spec(old)
    if not isinstance(new.get("spec"), dict):
        return
    if needs_cluster_ip(old) and not needs_cluster_ip(new):
        if (spec.get("clusterIPs") or []) == (old_spec.get("clusterIPs") or []):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        for field in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(field) == old_spec.get(field):
                spec.pop(field, None)
    if needs_node_port(old) and not needs_node_port(new) and _node_ports(new) == _node_ports(old):
        for port in _ports(new):
            port.pop("nodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        status = new.get("status")
        if isinstance(status, dict):
            status["loadBalancer"] = {}
    if _externally_accessible(old) and not _externally_accessible(new) and \
            spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)


def _externally_accessible(svc: Obj) -> bool:
    spec = _spec(svc)
    return needs_node_port(svc) or (spec.get("type") == "ClusterIP" and bool(spec.get("externalIPs")))


def ip_family_of(ip: Any) -> str | None:
    """"IPv4" or "IPv6" for a valid address, None for anything else."""
    if not isinstance(ip, str):
        return None
    try:
        return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    except ValueError:
        return None


def init_ip_families(new: Obj, old: Obj | None, *, cluster_family: str) -> None:
    """Default `ipFamilyPolicy` and `ipFamilies` as a single-stack cluster of `cluster_family` does."""
    spec = new.get("spec")
    if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
        return
    headless_selectorless = spec.get("clusterIP") == "None" and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        previous = _spec(old).get("ipFamilyPolicy") if old is not None else None
        spec["ipFamilyPolicy"] = previous or ("RequireDualStack" if headless_selectorless else "SingleStack")
    families = spec.get("ipFamilies")
    if families is not None and not isinstance(families, list):
        return
    families = list(families or [])
    for i, ip in enumerate(spec.get("clusterIPs") or [] if isinstance(spec.get("clusterIPs"), list) else []):
        if ip == "None":
            break
        family = ip_family_of(ip)
        if i >= len(families) and family is not None:
            families.append(family)
    if not families:
        families = [cluster_family]
    if headless_selectorless and len(families) < 2 and spec["ipFamilyPolicy"] != "SingleStack":
        families.append("IPv6" if families[0] == "IPv4" else "IPv4")
    spec["ipFamilies"] = families
