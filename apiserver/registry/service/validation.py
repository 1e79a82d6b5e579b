"""Service validation: ports, selector, type-specific fields, cluster IPs and what may change.

Mirrors ValidateService / ValidateServiceUpdate of pkg/apis/core/validation for a
single-stack cluster, with upstream's field paths and wording, every error at once:
- the name is a DNS-1035 label (it becomes a DNS name);
- ports: required unless headless or ExternalName, names DNS-1123 labels required and unique
  when there are several, port numbers 1-65535, protocol TCP/UDP/SCTP, targetPort a number
  or an IANA port name, no duplicate (protocol, port) or (protocol, nodePort), no nodePort on
  a ClusterIP Service;
- type ClusterIP/NodePort/LoadBalancer/ExternalName; `clusterIP: None` not with NodePort or
  LoadBalancer; an ExternalName Service has a DNS name and no cluster IPs or IP families;
- `clusterIP`/`clusterIPs` agree, hold valid addresses (or `None` alone) of their family;
- on update the cluster IPs may not change once set (unless the type moves to or from
  ExternalName or the Service stays headless).
Whether a requested IP or node port is free and in range is the allocator's to say.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.service.prepare import ip_family_of
from apiserver.registry.strategy import validate_object_meta
from apiserver.validation.field import duplicate, forbidden, invalid, not_supported, required
from apiserver.validation.network import (
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_ip,
    check_label_map,
    check_non_special_ip,
    check_port_num,
    check_port_num_or_name,
    check_qualified_name,
)
from kube.errors import FieldError

__all__ = ["validate_service", "validate_service_update", "PROTOCOLS", "SERVICE_TYPES"]

Obj = dict[str, Any]
PROTOCOLS = ("SCTP", "TCP", "UDP")
SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_AFFINITIES = ("ClientIP", "None")
_FAMILIES = ("IPv4", "IPv6")
_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
_TRAFFIC_POLICIES = ("Cluster", "Local")
_KUBELET_PORT = 10250


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None"


def validate_service(svc: Obj) -> list[FieldError]:
    """Every error in a Service about to be created (after defaulting and allocation prep)."""
    errs = validate_object_meta(svc, namespaced=True)
    name = (svc.get("metadata") or {}).get("name")
    if name:  # a Service's name is a DNS-1035 label (ValidateServiceName), not a subdomain
        errs = [e for e in errs if e.field != "metadata.name"]
        check_dns1035_label(errs, "metadata.name", name)
    spec = svc.get("spec")
    if not isinstance(spec, dict):
        return [*errs, required("spec")]
    return errs + _service_fields(spec)


def _service_fields(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = spec.get("type")
    ports = [p for p in _list(spec.get("ports")) if isinstance(p, dict)]
    headless = is_headless(spec)
    if not ports and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    errs += _type_fields(spec, kind, ports, headless)
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _service_port(port, f"spec.ports[{i}]", require_name=len(ports) > 1, names=names)
    if spec.get("selector") is not None:
        check_label_map(errs, "spec.selector", spec["selector"])
    errs += _session_affinity(spec)
    errs += _cluster_ip_fields(spec)
    for i, ip in enumerate(_list(spec.get("externalIPs"))):
        if check_ip(errs, f"spec.externalIPs[{i}]", ip):
            check_non_special_ip(errs, f"spec.externalIPs[{i}]", ip)
    if not kind:
        errs.append(required("spec.type"))
    elif kind not in SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, SERVICE_TYPES))
    errs += _port_uniqueness(kind, ports)
    errs += _traffic_policies(spec, kind)
    return errs


def _type_fields(spec: Obj, kind: Any, ports: list[Obj], headless: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if kind == "LoadBalancer":
        if headless:
            errs.append(invalid("spec.clusterIPs[0]", "None", "may not be set to 'None' for LoadBalancer services"))
        for i, port in enumerate(ports):
            if port.get("port") == _KUBELET_PORT:
                errs.append(invalid(f"spec.ports[{i}]", _KUBELET_PORT,
                                    f"may not expose port {_KUBELET_PORT} externally since it is used by kubelet"))
        if headless:
            errs.append(invalid("spec.clusterIP", "None", "may not be set to 'None' for LoadBalancer services"))
    elif kind == "NodePort" and headless:
        errs.append(invalid("spec.clusterIP", "None", "may not be set to 'None' for NodePort services"))
    elif kind == "ExternalName":
        if _list(spec.get("clusterIPs")):
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if _list(spec.get("ipFamilies")):
            errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = spec.get("externalName")
        cname = cname[:-1] if isinstance(cname, str) and cname.endswith(".") else cname
        if cname:
            check_dns1123_subdomain(errs, "spec.externalName", cname)
        else:
            errs.append(required("spec.externalName"))
    return errs


def _service_port(port: Obj, path: str, *, require_name: bool, names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        check_dns1123_label(errs, f"{path}.name", name)
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(str(name))
    check_port_num(errs, f"{path}.port", port.get("port"))
    protocol = port.get("protocol")
    if not protocol:
        errs.append(required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    check_port_num_or_name(errs, f"{path}.targetPort", port.get("targetPort"))
    if port.get("appProtocol") is not None:
        check_qualified_name(errs, f"{path}.appProtocol", port["appProtocol"])
    return errs


def _session_affinity(spec: Obj) -> list[FieldError]:
    affinity = spec.get("sessionAffinity")
    if not affinity:
        return [required("spec.sessionAffinity")]
    if affinity not in _AFFINITIES:
        return [not_supported("spec.sessionAffinity", affinity, _AFFINITIES)]
    config = spec.get("sessionAffinityConfig")
    if affinity == "None" and config is not None:
        return [forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")]
    if affinity == "ClientIP":
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        timeout = client_ip.get("timeoutSeconds") if isinstance(client_ip, dict) else None
        path = "spec.sessionAffinityConfig.clientIP.timeoutSeconds"
        if timeout is None:
            return [required(path)]
        if not isinstance(timeout, int) or not 0 < timeout <= 86400:
            return [invalid(path, timeout, "must be greater than 0 and less than 86400")]
    return []


def _cluster_ip_fields(spec: Obj) -> list[FieldError]:
    """ValidateServiceClusterIPsRelatedFields, for the address families of one cluster."""
    if spec.get("type") == "ExternalName":
        return []
    errs: list[FieldError] = []
    cluster_ip, cluster_ips = spec.get("clusterIP"), _list(spec.get("clusterIPs"))
    if cluster_ip:
        if not cluster_ips:
            errs.append(required("spec.clusterIPs"))
        elif cluster_ips[0] != cluster_ip:
            errs.append(invalid("spec.clusterIPs", cluster_ips, "first value must match `clusterIP`"))
    elif cluster_ips:
        errs.append(invalid("spec.clusterIPs", cluster_ips, "must be empty when `clusterIP` is not specified"))
    families = _list(spec.get("ipFamilies"))
    seen: set[Any] = set()
    for i, family in enumerate(families):
        if family not in _FAMILIES:
            errs.append(not_supported(f"spec.ipFamilies[{i}]", family, _FAMILIES))
        if family in seen:
            errs.append(duplicate(f"spec.ipFamilies[{i}]", family))
        seen.add(family)
    policy = spec.get("ipFamilyPolicy")
    if policy is not None and policy not in _POLICIES:
        errs.append(not_supported("spec.ipFamilyPolicy", policy, _POLICIES))
    bad_ips = False
    for i, ip in enumerate(cluster_ips):
        if i == 0 and ip == "None":
            if len(cluster_ips) > 1:
                bad_ips = True
                errs.append(invalid("spec.clusterIPs", cluster_ips, "'None' must be the first and only value"))
            continue
        bad_ips = not check_ip(errs, f"spec.clusterIPs[{i}]", ip) or bad_ips
    if len(cluster_ips) > 2:
        errs.append(invalid("spec.clusterIPs", cluster_ips, "may only hold up to 2 values"))
    if bad_ips:
        return errs
    if len(cluster_ips) > 1 and len({ip_family_of(ip) for ip in cluster_ips}) != len(cluster_ips):
        errs.append(invalid("spec.clusterIPs", cluster_ips, "may specify no more than one IP for each IP family"))
    if not is_headless(spec):
        for i, (ip, family) in enumerate(zip(cluster_ips, families, strict=False)):
            if family in _FAMILIES and ip_family_of(ip) != family:
                errs.append(invalid(f"spec.clusterIPs[{i}]", ip,
                                    f"expected an {family} value as indicated by `ipFamilies[{i}]`"))
    if policy == "SingleStack":
        if len(cluster_ips) == 2:
            errs.append(invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' "
                                "when multiple cluster IPs are specified"))
        if len(families) == 2:
            errs.append(invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' "
                                "when multiple IP families are specified"))
    return errs


def _port_uniqueness(kind: Any, ports: list[Obj]) -> list[FieldError]:
    errs: list[FieldError] = []
    node_ports: set[tuple[Any, Any]] = set()
    service_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        node_port = port.get("nodePort")
        if kind == "ClusterIP" and node_port:
            errs.append(forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"))
        if node_port:
            key = (port.get("protocol"), node_port)
            if key in node_ports:
                errs.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
            node_ports.add(key)
        key = (port.get("protocol"), port.get("port"))
        if key in service_ports:
            errs.append(FieldError(f"spec.ports[{i}]", f"Duplicate value: core.ServicePort{{Name:\"\", "
                                   f"Protocol:\"{key[0]}\", AppProtocol:(*string)(nil), Port:{key[1]}, "
                                   f"TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                                   reason="FieldValueDuplicate"))
        service_ports.add(key)
    return errs


def _traffic_policies(spec: Obj, kind: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    external = spec.get("externalTrafficPolicy")
    accessible = kind in ("NodePort", "LoadBalancer") or (kind == "ClusterIP" and bool(spec.get("externalIPs")))
    if accessible:
        if not external:
            errs.append(required("spec.externalTrafficPolicy"))
        elif external not in _TRAFFIC_POLICIES:
            errs.append(not_supported("spec.externalTrafficPolicy", external, _TRAFFIC_POLICIES))
    elif external:
        errs.append(invalid("spec.externalTrafficPolicy", external,
                            "may only be set for externally-accessible services"))
    internal = spec.get("internalTrafficPolicy")
    if kind == "ExternalName":
        return errs
    if internal is None:
        errs.append(required("spec.internalTrafficPolicy"))
    elif internal not in _TRAFFIC_POLICIES:
        errs.append(not_supported("spec.internalTrafficPolicy", internal, _TRAFFIC_POLICIES))
    return errs


def validate_service_update(new: Obj, old: Obj) -> list[FieldError]:
    """Every error in an updated Service, including cluster IPs that changed once set."""
    errs = validate_service(new)
    spec, old_spec = new.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return errs
    if "ExternalName" in (spec.get("type"), old_spec.get("type")) or (is_headless(spec) and is_headless(old_spec)):
        return errs
    ips, old_ips = _list(spec.get("clusterIPs")), _list(old_spec.get("clusterIPs"))
    if len(ips) == len(old_ips):
        errs += [invalid(f"spec.clusterIPs[{i}]", ips, "may not change once set")
                 for i, ip in enumerate(old_ips) if ip != ips[i]]
    elif len(old_ips) > len(ips):
        if not ips:
            errs.append(invalid("spec.clusterIPs[0]", ips, "primary clusterIP can not be unset"))
        elif ips[0] != old_ips[0]:
            errs.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    elif old_ips and ips[0] != old_ips[0]:
        errs.append(invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    return errs
