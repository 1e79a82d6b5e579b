"""The downward API: a pod's own fields and its containers' resources, as text.

Mirrors pkg/fieldpath (ExtractFieldPathAsString, FormatMap) and pkg/api/v1/resource
(ExtractContainerResourceValue), used by env `valueFrom` and by downwardAPI volume files:
- field paths: metadata.name/namespace/uid, whole `metadata.labels`/`metadata.annotations`
  (volumes only: `key="value"` lines, sorted), one `metadata.labels['k']`, spec.nodeName,
  spec.serviceAccountName, status.podIP(s), status.hostIP(s);
- resources: `limits.`/`requests.` cpu, memory, ephemeral-storage, in units of the divisor,
  rounded up; a container without a limit reports the node's allocatable instead, as the
  kubelet merges allocatable into missing limits.
An unknown field path or resource raises ValueError with upstream's wording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal

from kube.api import Container, Pod, ResourceFieldSelector
from kube.quantity import parse_quantity

__all__ = ["field_value", "format_map", "resource_value"]

_MAP_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']*)'\]$")
_DEFAULTED_LIMITS = ("cpu", "memory", "ephemeral-storage")


def format_map(values: Mapping[str, str]) -> str:
    """`key="value"` lines sorted by key, values escaped as Go's %q does for plain text."""
    return "\n".join(f'{k}="{_quote(values[k])}"' for k in sorted(values))


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def field_value(pod: Pod, path: str, *, pod_ip: str | None, host_ip: str) -> str:
    """The value of `path` (a fieldRef's fieldPath) for this pod; ValueError when unsupported."""
    meta = pod.metadata
    simple: dict[str, str | None] = {
        "metadata.name": meta.name, "metadata.namespace": meta.namespace, "metadata.uid": meta.uid,
        "spec.nodeName": pod.spec.node_name, "spec.serviceAccountName": pod.spec.service_account_name,
        "status.podIP": pod_ip, "status.podIPs": pod_ip, "status.hostIP": host_ip, "status.hostIPs": host_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        return format_map((meta.labels if path == "metadata.labels" else meta.annotations) or {})
    m = _MAP_FIELD.match(path)
    if m is not None:
        values = meta.annotations if m.group(1) == "annotations" else meta.labels
        return (values or {}).get(m.group(2), "")
    raise ValueError(f"unsupported fieldPath: {path}")


def resource_value(selector: ResourceFieldSelector, container: Container, allocatable: Mapping[str, str]) -> str:
    """`selector.resource` of `container` divided by the divisor and rounded up, as text."""
    kind, _, name = selector.resource.partition(".")
    if kind not in ("limits", "requests") or not name:
        raise ValueError(f"unsupported container resource : {selector.resource}")
    res = container.resources
    values = dict((res.limits if kind == "limits" else res.requests) or {}) if res else {}
    if kind == "limits":
        for key in _DEFAULTED_LIMITS:
            if key not in values and key in allocatable:
                values[key] = allocatable[key]
    amount = parse_quantity(values.get(name, "0"))
    divisor = parse_quantity(selector.divisor) if selector.divisor not in (None, "", 0, "0") else Decimal(1)
    if name == "cpu":  # upstream divides milli-values, so a sub-milli remainder never rounds up
        amount, divisor = _milli(amount), _milli(divisor) or Decimal(1)
    return str(int((amount / divisor).to_integral_value(rounding=ROUND_CEILING)))


def _milli(value: Decimal) -> Decimal:
    return (value * 1000).to_integral_value(rounding=ROUND_CEILING)
