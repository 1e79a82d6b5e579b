"""ResourceQuota for pods: `pods`, `requests.cpu`, `requests.memory`, `limits.cpu`, `limits.memory`
(and the bare `cpu`/`memory` aliases for requests), per namespace.

Guarantees: a pod that leaves a tracked compute resource unset in some container is refused
(`failed quota: NAME: must specify requests.cpu for: c`); a pod create that would take any
quota of its namespace over `spec.hard` is refused with 403 and upstream's message
(`exceeded quota: NAME, requested: ..., used: ..., limited: ...`), and nothing is stored.
Usage is recomputed from the namespace's live pods (from storage, not a cache; pods in a
terminal phase do not count) on every admission, so a failed create or a deleted pod never
leaks quota. Concurrent creates in one namespace are serialized by a per-namespace lock,
entered on the write's `held` stack and so held until the pod is stored: N racing creates
against `pods: N-1` store exactly N-1 pods. The lock lives in this API server process.
`status.hard` and `status.used` are written back for `kubectl describe quota`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from decimal import Decimal
from typing import Any

from apiserver.admission.interfaces import Attributes, Obj, Operation
from apiserver.admission.plugins._pods import forbidden
from apiserver.registry.lister import CacheLister
from kube.quantity import format_bytes, parse_quantity

__all__ = ["ResourceQuota", "pod_usage"]

_TRACKED = ("pods", "count/pods", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "cpu", "memory")
ListPods = Callable[[str], Awaitable[list[Obj]]]
WriteStatus = Callable[[str, str, Obj], Awaitable[None]]


def _q(value: Any) -> Decimal:
    try:
        return parse_quantity(str(value))
    except ValueError:
        return Decimal(0)


def _container_value(container: Any, kind: str, resource: str) -> Any:
    res = (container.get("resources") or {}) if isinstance(container, dict) else {}
    value = (res.get(kind) or {}).get(resource)
    if value is None and kind == "requests":
        value = (res.get("limits") or {}).get(resource)  # a request defaults to its limit
    return value


def pod_usage(pod: Obj) -> dict[str, Decimal]:
    """What one pod counts against a quota."""
    totals = {f"{kind}.{r}": Decimal(0) for kind in ("requests", "limits") for r in ("cpu", "memory")}
    for c in (pod.get("spec") or {}).get("containers") or []:
        for key in totals:
            kind, _, r = key.partition(".")
            v = _container_value(c, kind, r)
            if v is not None:
                totals[key] += _q(v)
    totals["cpu"], totals["memory"] = totals["requests.cpu"], totals["requests.memory"]
    totals["pods"] = totals["count/pods"] = Decimal(1)
    return totals


def _unspecified(pod: Obj, hard: Mapping[str, Any]) -> str:
    """`requests.cpu for: a,b; ...` for each tracked compute resource some container leaves unset."""
    parts = []
    for r in ("limits.cpu", "limits.memory", "requests.cpu", "requests.memory", "cpu", "memory"):
        if r not in hard:
            continue
        kind, _, res = r.rpartition(".")
        names = [str(c.get("name")) if isinstance(c, dict) else ""
                 for c in (pod.get("spec") or {}).get("containers") or []
                 if _container_value(c, kind or "requests", res) is None]
        if names:
            parts.append(f"{r} for: {','.join(names)}")
    return "; ".join(parts)


def _fmt(resource: str, value: Decimal) -> str:
    if resource in ("pods", "count/pods"):
        return str(int(value))
    if resource.endswith("memory"):
        return format_bytes(int(value))
    return str(int(value)) if value == value.to_integral_value() else f"{int(value * 1000)}m"


class ResourceQuota:
    name = "ResourceQuota"

    def __init__(self, quotas: CacheLister, *, list_pods: ListPods, write_status: WriteStatus) -> None:
        self.quotas, self.list_pods, self.write_status = quotas, list_pods, write_status
        self._locks: dict[str, asyncio.Lock] = {}

    def handles(self, operation: Operation) -> bool:
        return operation is Operation.CREATE

    async def validate(self, attrs: Attributes) -> None:
        if not attrs.targets("", "pods") or attrs.object is None or attrs.dry_run:
            return
        hards = [(q, (q.get("spec") or {}).get("hard") or {}) for q in self.quotas.iter(attrs.namespace)]
        hards = [(q, h) for q, h in hards if any(r in h for r in _TRACKED)]
        if hards:
            await attrs.held.enter_async_context(self._charge(attrs.namespace, attrs.name, attrs.object, hards))

    def _check(self, name: str, pod: Obj, used: dict[str, Decimal], hards: list[tuple[Obj, Obj]]) -> None:
        wanted = pod_usage(pod)
        for quota, hard in hards:
            qname = quota["metadata"]["name"]
            missing = _unspecified(pod, hard)
            if missing:
                raise forbidden(name, f"failed quota: {qname}: must specify {missing}")
            over = sorted(r for r in hard if r in _TRACKED and used[r] + wanted[r] > _q(hard[r]))
            if over:
                req = ",".join(f"{r}={_fmt(r, wanted[r])}" for r in over)
                use = ",".join(f"{r}={_fmt(r, used[r])}" for r in over)
                lim = ",".join(f"{r}={hard[r]}" for r in over)
                raise forbidden(name, f"exceeded quota: {qname}, requested: {req}, used: {use}, limited: {lim}")

    @contextlib.asynccontextmanager
    async def _charge(self, namespace: str, name: str, pod: Obj,
                      hards: list[tuple[Obj, Obj]]) -> AsyncIterator[None]:
        """Hold the namespace from the check until the write is done, then record the usage."""
        async with self._locks.setdefault(namespace, asyncio.Lock()):
            used = {r: Decimal(0) for r in _TRACKED}
            for p in await self.list_pods(namespace):
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    for r, v in pod_usage(p).items():
                        used[r] += v
            self._check(name, pod, used, hards)
            yield
            wanted = pod_usage(pod)
            for quota, hard in hards:
                status = {"hard": dict(hard), "used": {r: _fmt(r, used[r] + wanted[r]) for r in hard if r in _TRACKED}}
                with contextlib.suppress(Exception):  # status is informational; usage is recomputed anyway
                    await self.write_status(namespace, quota["metadata"]["name"], status)
