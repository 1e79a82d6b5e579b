"""One informer per (kind, namespace, selectors) per process, started and synced together.

Mirrors client-go's SharedInformerFactory: controllers ask the factory for the informer of a
kind instead of building their own, so a process holds one watch per collection however
many controllers read it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kube.api.base import T_Object
from kube.cache.informer import SharedInformer
from kube.client.rest import RESTClient
from kube.clock import Clock

__all__ = ["InformerFactory"]


class InformerFactory:
    def __init__(self, client: RESTClient, *, resync_period: float | None = None, clock: Clock | None = None) -> None:
        self.client = client
        self.resync_period = resync_period
        self.clock = clock
        self._informers: dict[tuple[Any, ...], SharedInformer[Any]] = {}

    def informer_for(self, cls: type[T_Object], *, namespace: str | None = None, label_selector: str | None = None,
                     field_selector: str | None = None) -> SharedInformer[T_Object]:
        key = (cls, namespace, label_selector, field_selector)
        if key not in self._informers:
            self._informers[key] = SharedInformer(self.client, cls, namespace=namespace, label_selector=label_selector,
                                                  field_selector=field_selector, resync_period=self.resync_period,
                                                  clock=self.clock)
        return self._informers[key]

    async def run(self) -> None:
        """Run every informer created so far until cancelled."""
        async with asyncio.TaskGroup() as tg:
            for informer in self._informers.values():
                tg.create_task(informer.run())

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        await asyncio.wait_for(asyncio.gather(*(i.wait_for_sync() for i in self._informers.values())), timeout)
