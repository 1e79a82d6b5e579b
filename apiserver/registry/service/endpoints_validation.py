"""Endpoints and EndpointSlice validation, as upstream words it.

Mirrors ValidateEndpoints (pkg/apis/core/validation) and ValidateEndpointSlice
(pkg/apis/discovery/validation):
- Endpoints: every subset has `addresses` or `notReadyAddresses`; each address a valid,
  non-special IP with an optional DNS-1123 hostname; ports named (DNS-1123 labels, unique)
  when there are several, numbers 1-65535, protocol TCP/UDP/SCTP;
- EndpointSlice: `addressType` IPv4, IPv6 or FQDN (immutable); at most 1000 endpoints, each
  with 1-100 addresses of that type; at most 20000 ports with unique DNS-1123 names, a
  protocol and, when set, a port number in range.
"""

from __future__ import annotations

from typing import Any

from apiserver.registry.service.validation import PROTOCOLS
from apiserver.registry.strategy import validate_object_meta
from apiserver.validation.field import duplicate, invalid, not_supported, required
from apiserver.validation.network import (
    check_dns1123_label,
    check_dns1123_subdomain,
    check_fqdn,
    check_ip,
    check_ip_of_family,
    check_non_special_ip,
    check_port_num,
    check_qualified_name,
)
from kube.errors import FieldError

__all__ = ["ADDRESS_TYPES", "validate_endpoint_slice", "validate_endpoint_slice_update", "validate_endpoints"]

Obj = dict[str, Any]
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
_MAX_ENDPOINTS = 1000
_MAX_ADDRESSES = 100
_MAX_PORTS = 20000


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _protocol(errs: list[FieldError], path: str, protocol: Any) -> None:
    if not protocol:
        errs.append(required(path))
    elif protocol not in PROTOCOLS:
        errs.append(not_supported(path, protocol, PROTOCOLS))


def validate_endpoints(ep: Obj) -> list[FieldError]:
    errs = validate_object_meta(ep, namespaced=True)
    for i, subset in enumerate(_dicts(ep.get("subsets"))):
        path = f"subsets[{i}]"
        addresses, not_ready = _dicts(subset.get("addresses")), _dicts(subset.get("notReadyAddresses"))
        if not addresses and not not_ready:
            errs.append(required(path, "must specify `addresses` or `notReadyAddresses`"))
        for field, items in (("addresses", addresses), ("notReadyAddresses", not_ready)):
            for j, address in enumerate(items):
                _endpoint_address(errs, f"{path}.{field}[{j}]", address)
        ports = _dicts(subset.get("ports"))
        names: set[str] = set()
        for j, port in enumerate(ports):
            _endpoint_port(errs, f"{path}.ports[{j}]", port, require_name=len(ports) > 1, names=names)
    return errs


def _endpoint_address(errs: list[FieldError], path: str, address: Obj) -> None:
    ip = address.get("ip")
    if check_ip(errs, f"{path}.ip", ip):
        check_non_special_ip(errs, f"{path}.ip", str(ip))
    if address.get("hostname"):
        check_dns1123_label(errs, f"{path}.hostname", address["hostname"])
    if address.get("nodeName"):
        check_dns1123_subdomain(errs, f"{path}.nodeName", address["nodeName"])


def _endpoint_port(errs: list[FieldError], path: str, port: Obj, *, require_name: bool, names: set[str]) -> None:
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        check_dns1123_label(errs, f"{path}.name", name)
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(str(name))
    check_port_num(errs, f"{path}.port", port.get("port"))
    _protocol(errs, f"{path}.protocol", port.get("protocol"))
    if port.get("appProtocol") is not None:
        check_qualified_name(errs, f"{path}.appProtocol", port["appProtocol"])


def validate_endpoint_slice(eps: Obj) -> list[FieldError]:
    errs = validate_object_meta(eps, namespaced=True)
    address_type = eps.get("addressType")
    if not address_type:
        errs.append(required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = _dicts(eps.get("endpoints"))
    if len(endpoints) > _MAX_ENDPOINTS:
        errs.append(FieldError("endpoints", f"Too many: {len(endpoints)}: must have at most {_MAX_ENDPOINTS} items",
                               reason="FieldValueTooMany"))
    else:
        for i, endpoint in enumerate(endpoints):
            _slice_endpoint(errs, f"endpoints[{i}]", endpoint, address_type)
    ports = _dicts(eps.get("ports"))
    if len(ports) > _MAX_PORTS:
        errs.append(FieldError("ports", f"Too many: {len(ports)}: must have at most {_MAX_PORTS} items",
                               reason="FieldValueTooMany"))
        return errs
    names: set[str] = set()
    for i, port in enumerate(ports):
        path = f"ports[{i}]"
        name = port.get("name") or ""
        if name:
            check_dns1123_label(errs, f"{path}.name", name)
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(str(name))
        _protocol(errs, f"{path}.protocol", port.get("protocol"))
        if port.get("port") is not None:
            check_port_num(errs, f"{path}.port", port["port"])
        if port.get("appProtocol") is not None:
            check_qualified_name(errs, f"{path}.appProtocol", port["appProtocol"])
    return errs


def _slice_endpoint(errs: list[FieldError], path: str, endpoint: Obj, address_type: Any) -> None:
    addresses = endpoint.get("addresses")
    addresses = addresses if isinstance(addresses, list) else []
    if not addresses:
        errs.append(required(f"{path}.addresses", "must contain at least 1 address"))
    elif len(addresses) > _MAX_ADDRESSES:
        errs.append(FieldError(f"{path}.addresses", f"Too many: {len(addresses)}: must have at most "
                               f"{_MAX_ADDRESSES} items", reason="FieldValueTooMany"))
    else:
        for j, address in enumerate(addresses):
            apath = f"{path}.addresses[{j}]"
            if address_type in ("IPv4", "IPv6"):
                if check_ip_of_family(errs, apath, address, address_type):
                    check_non_special_ip(errs, apath, address)
            elif address_type == "FQDN":
                check_fqdn(errs, apath, address)
    if endpoint.get("hostname"):
        check_dns1123_label(errs, f"{path}.hostname", endpoint["hostname"])
    if endpoint.get("nodeName"):
        check_dns1123_subdomain(errs, f"{path}.nodeName", endpoint["nodeName"])


def validate_endpoint_slice_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = validate_endpoint_slice(new)
    if new.get("addressType") != old.get("addressType"):
        errs.append(invalid("addressType", new.get("addressType"), "field is immutable"))
    return errs
