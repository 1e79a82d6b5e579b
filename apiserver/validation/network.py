"""Checks on names, ports and IP addresses, worded as apimachinery's validation package words them.

Mirrors k8s.io/apimachinery/pkg/util/validation (IsDNS1035Label, IsDNS1123Label,
IsValidPortNum, IsValidPortName, IsValidIP, IsValidIPv4Address/IPv6Address,
IsFullyQualifiedDomainName) and ValidateNonSpecialIP of pkg/apis/core/validation. Each
function appends field errors for the value at `path` and returns nothing; values of the
wrong JSON type are reported as invalid rather than raising.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from apiserver.validation.field import invalid, required
from kube.errors import FieldError

__all__ = ["check_dns1035_label", "check_dns1123_label", "check_dns1123_subdomain", "check_fqdn",
           "check_ip", "check_ip_of_family", "check_label_map", "check_non_special_ip", "check_port_name",
           "check_port_num", "check_port_num_or_name", "check_qualified_name", "is_port_num"]

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile(r"[a-z]")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex "
               "used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                     "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                         "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def check_dns1035_label(errs: list[FieldError], path: str, value: Any) -> None:
    if not isinstance(value, str):
        errs.append(invalid(path, value, DNS1035_MSG))
        return
    if len(value) > 63:
        errs.append(invalid(path, value, "must be no more than 63 characters"))
    if not _DNS1035.match(value):
        errs.append(invalid(path, value, DNS1035_MSG))


def check_dns1123_label(errs: list[FieldError], path: str, value: Any) -> None:
    if not isinstance(value, str):
        errs.append(invalid(path, value, DNS1123_LABEL_MSG))
        return
    if len(value) > 63:
        errs.append(invalid(path, value, "must be no more than 63 characters"))
    if not _DNS1123_LABEL.match(value):
        errs.append(invalid(path, value, DNS1123_LABEL_MSG))


def check_dns1123_subdomain(errs: list[FieldError], path: str, value: Any) -> None:
    if not isinstance(value, str):
        errs.append(invalid(path, value, DNS1123_SUBDOMAIN_MSG))
        return
    if len(value) > 253:
        errs.append(invalid(path, value, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(invalid(path, value, DNS1123_SUBDOMAIN_MSG))


def check_fqdn(errs: list[FieldError], path: str, value: Any) -> None:
    """IsFullyQualifiedDomainName: a subdomain with at least two segments."""
    name = value.rstrip(".") if isinstance(value, str) else value
    before = len(errs)
    check_dns1123_subdomain(errs, path, name)
    if len(errs) == before and isinstance(name, str) and "." not in name:
        errs.append(invalid(path, value, "should be a domain with at least two segments separated by dots"))


def is_port_num(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def check_port_num(errs: list[FieldError], path: str, value: Any) -> None:
    if not is_port_num(value):
        errs.append(invalid(path, value, PORT_RANGE_MSG))


def check_port_name(errs: list[FieldError], path: str, value: str) -> None:
    """IsValidPortName: an IANA_SVC_NAME (at most 15 characters, a letter, no edge or double hyphens)."""
    problems = []
    if len(value) > 15:
        problems.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(value):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(value):
        problems.append("must contain at least one letter (a-z)")
    if "--" in value:
        problems.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    errs.extend(invalid(path, value, p) for p in problems)


def check_port_num_or_name(errs: list[FieldError], path: str, value: Any) -> None:
    """ValidatePortNumOrName: a port number, or a port name (a container port's name)."""
    if isinstance(value, str):
        if not value:
            errs.append(required(path))
        else:
            check_port_name(errs, path, value)
    else:
        check_port_num(errs, path, value)


def check_ip(errs: list[FieldError], path: str, value: Any) -> bool:
    """IsValidIP; True when the value is an address."""
    try:
        ipaddress.ip_address(value if isinstance(value, str) else "")
        return True
    except ValueError:
        errs.append(invalid(path, value, IP_MSG))
        return False


def check_ip_of_family(errs: list[FieldError], path: str, value: Any, family: str) -> bool:
    """IsValidIPv4Address / IsValidIPv6Address."""
    try:
        ok = ipaddress.ip_address(value if isinstance(value, str) else "").version == (6 if family == "IPv6" else 4)
    except ValueError:
        ok = False
    if not ok:
        errs.append(invalid(path, value, f"must be a valid {family} address"))
    return ok


def check_non_special_ip(errs: list[FieldError], path: str, value: str) -> None:
    """ValidateNonSpecialIP: endpoints and external IPs may not be unspecified, loopback or link-local."""
    ip = ipaddress.ip_address(value)
    if ip.is_unspecified:
        errs.append(invalid(path, value, "may not be unspecified (0.0.0.0)" if ip.version == 4 else
                            "may not be unspecified (::)"))
    elif ip.is_loopback:
        errs.append(invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    elif ip.is_link_local:
        errs.append(invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    elif ip in ipaddress.ip_network("224.0.0.0/24") or ip in ipaddress.ip_network("ff02::/16"):
        errs.append(invalid(path, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))


def check_qualified_name(errs: list[FieldError], path: str, value: Any) -> None:
    from apiserver.registry.strategy import qualified_name_error  # local: the registry imports validation

    problem = qualified_name_error(value) if isinstance(value, str) else "must be a string"
    if problem:
        errs.append(invalid(path, value, problem))


def check_label_map(errs: list[FieldError], path: str, labels: Any) -> None:
    """ValidateLabels: qualified-name keys and label values."""
    if not isinstance(labels, dict):
        errs.append(invalid(path, labels, "must be a map of string to string"))
        return
    for key, value in labels.items():
        check_qualified_name(errs, path, key)
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.match(value):
            errs.append(invalid(path, value, LABEL_VALUE_MSG))
