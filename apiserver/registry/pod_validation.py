"""Pod spec validation, shared by pods and by the pod templates of Deployments and ReplicaSets.

Mirrors pkg/apis/core/validation ValidatePodSpec for what users get wrong most, with
Kubernetes' field paths and wording, every error at once:
- containers: present, names DNS-1123 labels unique across init and app containers, an
  image, ports 1-65535 with protocol TCP/UDP/SCTP, env names set, imagePullPolicy enum;
- resources: every quantity parses, and a request is not above its limit;
- restartPolicy and dnsPolicy enums, non-negative terminationGracePeriodSeconds;
- volumes and volume mounts (validation/volumes.py), projected volumes' sources
  (validation/projected.py);
- dnsConfig (validatePodDNSConfig): dnsPolicy None needs one with a nameserver; at most 3
  nameservers, each an IP; at most 32 search domains, 2048 characters in all, each a
  DNS-1123 subdomain (a trailing dot allowed); every option named;
- on update, a pod's spec is immutable except container images, activeDeadlineSeconds,
  added tolerations and the scheduler's binding of spec.nodeName.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from apiserver.validation.field import invalid, required
from apiserver.validation.network import check_dns1123_subdomain, check_ip
from apiserver.validation.projected import validate_projected_volume
from apiserver.validation.schema_checks import QUANTITY_FORMAT_MSG
from apiserver.validation.volumes import validate_volume_mounts, validate_volumes
from kube.errors import FieldError
from kube.quantity import parse_quantity

__all__ = ["validate_container", "validate_pod_spec", "validate_pod_spec_update"]

Obj = dict[str, Any]
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_QUANTITY_MSG = QUANTITY_FORMAT_MSG
_IMMUTABLE_MSG = ("pod updates may not change fields other than `spec.containers[*].image`,"
                  "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                  "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                  "(allow it to be set to 1 if it was previously negative)")


def _enum(errs: list[FieldError], path: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        supported = ", ".join(f'"{a}"' for a in allowed)
        errs.append(FieldError(path, f'Unsupported value: "{value}": supported values: {supported}',
                               reason="FieldValueNotSupported"))


def _resources(errs: list[FieldError], path: str, resources: Any) -> None:
    if not isinstance(resources, dict):
        return
    parsed: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        values = resources.get(kind) or {}
        if not isinstance(values, dict):
            continue
        for name, q in values.items():
            try:
                parsed.setdefault(kind, {})[name] = parse_quantity(q)
            except (ValueError, TypeError, ArithmeticError):
                errs.append(FieldError(f"{path}.{kind}[{name}]", f'Invalid value: "{q}": {_QUANTITY_MSG}'))
                continue
            if parsed[kind][name] < 0:
                errs.append(FieldError(f"{path}.{kind}[{name}]", f'Invalid value: "{q}": must be greater than or '
                                       "equal to 0"))
    for name, req in (parsed.get("requests") or {}).items():
        limit = (parsed.get("limits") or {}).get(name)
        if limit is not None and req > limit:
            q = resources["requests"][name]
            errs.append(FieldError(f"{path}.requests", f'Invalid value: "{q}": must be less than or equal to '
                                   f"{name} limit of {resources['limits'][name]}"))


def validate_container(errs: list[FieldError], path: str, c: Obj, seen: set[str]) -> None:
    """The checks every kind of container gets; `seen` holds the names taken so far (and gains this one)."""
    name = c.get("name")
    if not name:
        errs.append(FieldError(f"{path}.name", "Required value", reason="FieldValueRequired"))
    elif not isinstance(name, str) or len(name) > 63 or not _LABEL.match(name):
        errs.append(FieldError(f"{path}.name", f'Invalid value: "{name}": a lowercase RFC 1123 label must consist '
                               "of lower case alphanumeric characters or '-', and must start and end with an "
                               "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
                               "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"))
    elif name in seen:
        errs.append(FieldError(f"{path}.name", f'Duplicate value: "{name}"', reason="FieldValueDuplicate"))
    if isinstance(name, str):
        seen.add(name)
    if not c.get("image") or (isinstance(c.get("image"), str) and not c["image"].strip()):
        errs.append(FieldError(f"{path}.image", "Required value", reason="FieldValueRequired"))
    _enum(errs, f"{path}.imagePullPolicy", c.get("imagePullPolicy"), ("Always", "IfNotPresent", "Never"))
    for i, port in enumerate(c.get("ports") or []):
        if not isinstance(port, dict):
            continue
        p = port.get("containerPort")
        if not isinstance(p, int) or isinstance(p, bool) or not 1 <= p <= 65535:
            errs.append(FieldError(f"{path}.ports[{i}].containerPort",
                                   f"Invalid value: {p}: must be between 1 and 65535, inclusive"
                                   if p is not None else "Required value",
                                   reason="FieldValueInvalid" if p is not None else "FieldValueRequired"))
        hp = port.get("hostPort")
        if hp not in (None, 0) and (not isinstance(hp, int) or not 1 <= hp <= 65535):
            errs.append(FieldError(f"{path}.ports[{i}].hostPort",
                                   f"Invalid value: {hp}: must be between 1 and 65535, inclusive"))
        _enum(errs, f"{path}.ports[{i}].protocol", port.get("protocol"), ("SCTP", "TCP", "UDP"))
    for i, env in enumerate(c.get("env") or []):
        if isinstance(env, dict) and not env.get("name"):
            errs.append(FieldError(f"{path}.env[{i}].name", "Required value", reason="FieldValueRequired"))
    _resources(errs, f"{path}.resources", c.get("resources"))


def validate_pod_spec(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        errs.append(FieldError(f"{path}.containers", "Required value", reason="FieldValueRequired"))
        containers = []
    seen: set[str] = set()
    volume_names = validate_volumes(errs, f"{path}.volumes", spec.get("volumes"))
    for field, items in (("initContainers", spec.get("initContainers") or []), ("containers", containers)):
        for i, c in enumerate(items if isinstance(items, list) else []):
            if isinstance(c, dict):
                validate_container(errs, f"{path}.{field}[{i}]", c, seen)
                validate_volume_mounts(errs, f"{path}.{field}[{i}].volumeMounts", c.get("volumeMounts"),
                                       volume_names)
            else:
                errs.append(FieldError(f"{path}.{field}[{i}]", "Invalid value: must be an object"))
    _enum(errs, f"{path}.restartPolicy", spec.get("restartPolicy"), ("Always", "OnFailure", "Never"))
    _enum(errs, f"{path}.dnsPolicy", spec.get("dnsPolicy"), ("ClusterFirst", "ClusterFirstWithHostNet", "Default",
                                                            "None"))
    _dns_config(errs, f"{path}.dnsConfig", spec.get("dnsConfig"), spec.get("dnsPolicy"))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0:
        errs.append(FieldError(f"{path}.terminationGracePeriodSeconds",
                               f"Invalid value: {grace}: must be greater than or equal to 0"))
    volumes = spec.get("volumes")
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if isinstance(volume, dict) and "projected" in volume:
            validate_projected_volume(errs, f"{path}.volumes[{i}].projected", volume["projected"])
    return errs


MAX_DNS_NAMESERVERS, MAX_DNS_SEARCH_PATHS, MAX_DNS_SEARCH_LIST_CHARS = 3, 32, 2048


def _dns_config(errs: list[FieldError], path: str, config: Any, policy: Any) -> None:
    if policy == "None":
        if not isinstance(config, dict):
            errs.append(required(path, "must provide `dnsConfig` when `dnsPolicy` is None"))
            return
        if not config.get("nameservers"):
            errs.append(required(f"{path}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` "
                                                        "is None"))
            return
    if not isinstance(config, dict):
        return
    servers = config.get("nameservers") or []
    if isinstance(servers, list):
        if len(servers) > MAX_DNS_NAMESERVERS:
            errs.append(invalid(f"{path}.nameservers", servers,
                                f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"))
        for i, server in enumerate(servers):
            check_ip(errs, f"{path}.nameservers[{i}]", server)
    searches = config.get("searches") or []
    if isinstance(searches, list):
        if len(searches) > MAX_DNS_SEARCH_PATHS:
            errs.append(invalid(f"{path}.searches", searches,
                                f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths"))
        if len(" ".join(str(s) for s in searches)) > MAX_DNS_SEARCH_LIST_CHARS:
            errs.append(invalid(f"{path}.searches", searches, f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} "
                                                             "characters (including spaces) in the search list"))
        for i, search in enumerate(searches):
            check_dns1123_subdomain(errs, f"{path}.searches[{i}]",
                                    search.removesuffix(".") if isinstance(search, str) else search)
    for i, option in enumerate(config.get("options") or []):
        if not isinstance(option, dict) or not option.get("name"):
            errs.append(required(f"{path}.options[{i}]", "must not be empty"))


def _mutable_view(spec: Obj, old_spec: Obj) -> Obj:
    view = copy.deepcopy(spec)
    view.pop("activeDeadlineSeconds", None)
    view.pop("tolerations", None)
    if not old_spec.get("nodeName"):
        view.pop("nodeName", None)
    for field in ("containers", "initContainers"):
        for c in view.get(field) or []:
            if isinstance(c, dict):
                c.pop("image", None)
    return view


def validate_pod_spec_update(new: Obj, old: Obj) -> list[FieldError]:
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict):
        return []
    if _mutable_view(new_spec, old_spec) != _mutable_view(old_spec, old_spec):
        return [FieldError("spec", f"Forbidden: {_IMMUTABLE_MSG}", reason="FieldValueForbidden")]
    old_tol = old_spec.get("tolerations") or []
    new_tol = new_spec.get("tolerations") or []
    if isinstance(new_tol, list) and any(t not in new_tol for t in old_tol):
        return [FieldError("spec.tolerations", "Forbidden: existing toleration can not be modified except its "
                           "tolerationSeconds", reason="FieldValueForbidden")]
    return []
