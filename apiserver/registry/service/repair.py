"""The repair pass: keep the allocation bitmaps true to the Services stored.

Mirrors pkg/registry/core/service/ipallocator/controller and portallocator/controller
(`Repair`). Every pass lists the Services from etcd and, in one compare-and-swap per range,
marks every cluster IP and node port a Service holds (so a lost or reset bitmap, or a
changed range, never lets a held address go out again) and reclaims members no Service
holds. A member is reclaimed only when the pass before found it unheld too, at least
`grace` seconds earlier: between taking an address and storing its Service an API server
holds an address no Service shows yet, and this pass must not free it under its feet.
The server runs one pass at start, before it takes any Service write, then one every
interval.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from apiserver.registry.generic import ListOptions, RegistryStore
from apiserver.registry.service.allocation import ServiceAllocators
from apiserver.registry.service.allocator import Bitmap, RangeAllocator

__all__ = ["ServiceRangeRepair"]

logger = logging.getLogger(__name__)


class ServiceRangeRepair:
    def __init__(self, *, allocators: ServiceAllocators, services: RegistryStore, grace: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.allocators, self.services, self.grace, self.clock = allocators, services, grace, clock
        self._suspects: dict[str, dict[int, float]] = {"ips": {}, "ports": {}}

    async def run_once(self) -> None:
        """One pass over every Service; safe beside concurrent Service writes."""
        listed = await self.services.list(None, ListOptions())
        ips: set[int] = set()
        ports: set[int] = set()
        for svc in listed["items"]:
            held_ips, held_ports = self.allocators.held_offsets(svc)
            ips.update(held_ips)
            ports.update(held_ports)
        await self._reconcile(self.allocators.ip_allocator, ips, self._suspects["ips"])
        await self._reconcile(self.allocators.port_allocator, ports, self._suspects["ports"])

    async def _reconcile(self, allocator: RangeAllocator, held: set[int], suspects: dict[int, float]) -> None:
        now = self.clock()
        reclaimed: list[int] = []

        def fix(bitmap: Bitmap) -> None:
            reclaimed.clear()
            for offset in held:
                bitmap.take(offset)
            leaked = bitmap.members() - held
            for offset in [o for o in suspects if o not in leaked]:
                del suspects[offset]
            for offset in leaked:
                if now - suspects.setdefault(offset, now) >= self.grace:
                    bitmap.give_back(offset)
                    reclaimed.append(offset)
        await allocator.change(fix)
        for offset in reclaimed:
            suspects.pop(offset, None)
        if reclaimed:
            logger.info("Reclaimed addresses no Service holds", extra={"key": allocator.key, "count": len(reclaimed)})

    async def run(self, interval: float) -> None:
        """A pass every `interval` seconds until cancelled; a failed pass is logged and retried next time."""
        while True:
            await asyncio.sleep(interval)
            try:
                await self.run_once()
            except Exception:
                logger.exception("Service address repair failed, will retry")
