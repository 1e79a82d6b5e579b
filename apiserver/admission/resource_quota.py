"""ResourceQuota admission for pods: count `pods`, `requests.cpu`, `requests.memory`,
`limits.cpu`, `limits.memory` (and the bare `cpu`/`memory` aliases for requests) per namespace.

Guarantees: a pod that leaves a tracked compute resource unset in some container is
refused (`failed quota: NAME: must specify requests.cpu for: c`); a pod create that would take any quota of its namespace over `spec.hard` is
refused with 403 and upstream's message (`exceeded quota: NAME, requested: ..., used: ...,
limited: ...`), and nothing is stored. Usage is recomputed from the namespace's live pods
(from etcd, not a cache; pods in a terminal phase do not count) on every admission, so a
failed create or a deleted pod never leaks quota. Concurrent creates in one namespace are
serialized by a per-namespace lock held from the check until the pod is stored, so N racing
creates against `pods: N-1` store exactly N-1 pods. The lock lives in this API server
process; picokube runs one. `status.hard` and `status.used` are written back for
`kubectl describe quota`.
"""

from __future__ import annotations

import asyncio
import contextlib
from decimal import Decimal
from typing import Any, AsyncIterator, Mapping

from kube.errors import Forbidden
from kube.quantity import format_bytes, parse_quantity
from apiserver.admission.pod_defaults import CACHED
from apiserver.registry.generic import ListOptions, RegistryStore

__all__ = ["QuotaAdmission", "pod_usage"]

Obj = dict[str, Any]
_TRACKED = ("pods", "count/pods", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "cpu", "memory")


def _q(value: Any) -> Decimal:
    try:
        return parse_quantity(str(value))
    except ValueError:
        return Decimal(0)


def pod_usage(pod: Obj) -> dict[str, Decimal]:
    """What one pod counts against a quota."""
    spec = pod.get("spec") or {}
    totals = {"requests.cpu": Decimal(0), "requests.memory": Decimal(0), "limits.cpu": Decimal(0),
              "limits.memory": Decimal(0)}
    for c in spec.get("containers") or []:
        res = (c.get("resources") or {}) if isinstance(c, dict) else {}
        for kind in ("requests", "limits"):
            for r in ("cpu", "memory"):
                v = (res.get(kind) or {}).get(r)
                if v is None and kind == "requests":
                    v = (res.get("limits") or {}).get(r)
                if v is not None:
                    totals[f"{kind}.{r}"] += _q(v)
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
        names = []
        for c in (pod.get("spec") or {}).get("containers") or []:
            resources = (c.get("resources") or {}) if isinstance(c, dict) else {}
            have = (resources.get(kind or "requests") or {}).get(res)
            if have is None and (kind or "requests") == "requests":
                have = (resources.get("limits") or {}).get(res)
            if have is None:
                names.append(str(c.get("name")) if isinstance(c, dict) else "")
        if names:
            parts.append(f"{r} for: {','.join(names)}")
    return "; ".join(parts)


def _fmt(resource: str, value: Decimal) -> str:
    if resource in ("pods", "count/pods"):
        return str(int(value))
    if resource.endswith("memory"):
        return format_bytes(int(value))
    return str(int(value)) if value == value.to_integral_value() else f"{int(value * 1000)}m"


class QuotaAdmission:
    def __init__(self, stores: Mapping[str, RegistryStore]) -> None:
        self.stores = stores
        self._locks: dict[str, asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def admit(self, namespace: str, name: str, pod: Obj) -> AsyncIterator[None]:
        """Check `pod` against the namespace's quotas; hold the namespace until the body is done."""
        # The quotas themselves come from the watch cache (no etcd read for the common no-quota case);
        # the pods they count are read from etcd under the lock, so concurrent creates are exact.
        quotas = (await self.stores["resourcequotas"].list(namespace, CACHED)).get("items") or []
        hards = [(q, (q.get("spec") or {}).get("hard") or {}) for q in quotas]
        hards = [(q, h) for q, h in hards if any(r in h for r in _TRACKED)]
        if not hards:
            yield
            return
        lock = self._locks.setdefault(namespace, asyncio.Lock())
        async with lock:
            used = {r: Decimal(0) for r in _TRACKED}
            pods = (await self.stores["pods"].list(namespace, ListOptions())).get("items") or []
            for p in pods:
                if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue
                for r, v in pod_usage(p).items():
                    used[r] += v
            wanted = pod_usage(pod)
            for quota, hard in hards:
                missing = _unspecified(pod, hard)
                if missing:
                    raise Forbidden(f'pods "{name}" is forbidden: failed quota: {quota["metadata"]["name"]}: '
                                    f"must specify {missing}", details={"name": name, "kind": "pods"})
                over = [r for r in hard if r in _TRACKED and used[r] + wanted[r] > _q(hard[r])]
                if over:
                    qname = quota["metadata"]["name"]
                    req = ",".join(f"{r}={_fmt(r, wanted[r])}" for r in sorted(over))
                    use = ",".join(f"{r}={_fmt(r, used[r])}" for r in sorted(over))
                    lim = ",".join(f"{r}={hard[r]}" for r in sorted(over))
                    raise Forbidden(f'pods "{name}" is forbidden: exceeded quota: {qname}, requested: {req}, '
                                    f"used: {use}, limited: {lim}", details={"name": name, "kind": "pods"})
            yield
            for quota, hard in hards:
                status_used = {r: _fmt(r, used[r] + wanted[r]) for r in hard if r in _TRACKED}

                def set_status(obj: Obj, hard: Obj = hard, status_used: Obj = status_used) -> Obj:
                    obj["status"] = {"hard": dict(hard), "used": status_used}
                    return obj

                with contextlib.suppress(Exception):  # status is informational; usage is recomputed anyway
                    await self.stores["resourcequotas"].patch(namespace, quota["metadata"]["name"], set_status,
                                                              subresource="status", manager="resourcequota")
