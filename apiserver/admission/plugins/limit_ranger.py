"""LimitRanger: a namespace's `type: Container` LimitRanges default and bound container resources.

Missing limits come from `default`, missing requests from `defaultRequest` (else the limit,
as pod defaulting does); a request under `min` or a limit over (or missing under) `max` is
403 with upstream's message. LimitRanges are read from the watch cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from apiserver.admission.interfaces import Attributes, Obj
from apiserver.admission.plugins._pods import PodCreateMutation, forbidden
from apiserver.registry.lister import CacheLister
from kube.quantity import parse_quantity

__all__ = ["LimitRanger"]


def _containers(spec: Obj) -> list[Obj]:
    out: list[Obj] = []
    for field in ("initContainers", "containers"):
        items = spec.get(field)
        if isinstance(items, list):
            out.extend(c for c in items if isinstance(c, dict))
    return out


def _apply_defaults(container: Obj, item: Obj) -> None:
    resources = container.get("resources")
    if resources is None:
        resources = container["resources"] = {}
    if not isinstance(resources, dict):
        return  # validation reports it
    limits = dict(resources.get("limits") or {})
    requests = dict(resources.get("requests") or {})
    default: Mapping[str, str] = item.get("default") or {}
    default_request: Mapping[str, str] = item.get("defaultRequest") or {}
    for res, q in default.items():
        limits.setdefault(res, q)
    for res, q in default_request.items():
        requests.setdefault(res, q)
    for res, q in limits.items():
        requests.setdefault(res, q)
    if limits:
        resources["limits"] = limits
    if requests:
        resources["requests"] = requests


_BOUNDS: tuple[tuple[str, str, str, Callable[[Any, Any], bool]], ...] = (
    ("minimum", "requests", "min", lambda v, b: v < b),
    ("maximum", "limits", "max", lambda v, b: v > b),
)


def _check_bounds(pod: str, container: Obj, item: Obj) -> None:
    resources = container.get("resources") or {}
    for kind, field, bound, beyond in _BOUNDS:
        for res, limit_q in (item.get(bound) or {}).items():
            have = (resources.get(field) or {}).get(res)
            if have is None:
                if bound == "max":
                    raise forbidden(pod, f"maximum {res} usage per Container is {limit_q}, but limit is unbounded")
                continue
            try:
                outside = beyond(parse_quantity(str(have)), parse_quantity(str(limit_q)))
            except ValueError:
                continue  # validation reports the malformed quantity with its field path
            if outside:
                word = "request" if field == "requests" else "limit"
                raise forbidden(pod, f"{kind} {res} usage per Container is {limit_q}, but {word} is {have}")


class LimitRanger(PodCreateMutation):
    name = "LimitRanger"

    def __init__(self, limit_ranges: CacheLister) -> None:
        self.limit_ranges = limit_ranges

    async def admit_pod(self, attrs: Attributes, spec: Obj) -> None:
        for limit_range in self.limit_ranges.iter(attrs.namespace):
            for item in (limit_range.get("spec") or {}).get("limits") or []:
                if not isinstance(item, dict) or item.get("type") != "Container":
                    continue
                for container in _containers(spec):
                    _apply_defaults(container, item)
                    _check_bounds(attrs.name, container, item)
