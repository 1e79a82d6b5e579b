"""The DNS server's control loop: watch Services and EndpointSlices, keep the zone current.

Mirrors CoreDNS's kubernetes plugin (its dnsController): shared informers (`kube.cache`)
hold every Service and EndpointSlice; each watch event only marks the zone dirty and wakes
the loop, which rebuilds the whole zone from the caches (level-triggered, never from the
event) and swaps it into the resolver. A burst of events between two rebuilds costs one
rebuild. Nothing is answered before both caches have synced (queries wait in the socket
buffers), so a restarting server never answers NXDOMAIN for a name that exists.

With publishing on, the loop also keeps `kube-system/kube-dns` pointing here
(`clusterdns.publish`): after the caches sync, whenever one of those objects changes, and
every `PUBLISH_RESYNC` seconds; a refused write is retried after `PUBLISH_RETRY` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time

import httpx

from clusterdns.publish import KubeDNSPublisher, is_published_object
from clusterdns.records import build_zone
from clusterdns.resolver import ClusterResolver
from kube.api.base import KubeObject
from kube.api.core_v1_services import Service
from kube.api.discovery_v1 import EndpointSlice
from kube.cache import EventHandler, InformerFactory, SharedInformer
from kube.client import RESTClient
from kube.errors import ApiError

__all__ = ["ZoneWatcher"]

logger = logging.getLogger(__name__)

PUBLISH_RESYNC = 60.0
PUBLISH_RETRY = 2.0


class ZoneWatcher:
    """Feeds `resolver.zone` from the API; `publisher`, when given, keeps kube-dns current."""

    def __init__(self, client: RESTClient, resolver: ClusterResolver, *, domain: str,
                 publisher: KubeDNSPublisher | None = None) -> None:
        self.resolver, self.domain, self.publisher = resolver, domain, publisher
        self._factory = InformerFactory(client)
        self.services: SharedInformer[Service] = self._factory.informer_for(Service)
        self.slices: SharedInformer[EndpointSlice] = self._factory.informer_for(EndpointSlice)
        for informer in (self.services, self.slices):
            informer.add_event_handler(EventHandler(on_add=self._changed, on_update=lambda _, new: self._changed(new),
                                                    on_delete=self._changed))
        self._dirty = asyncio.Event()
        self._publish = asyncio.Event()
        self.synced = asyncio.Event()

    def _changed(self, obj: KubeObject) -> None:
        self._dirty.set()
        if is_published_object(obj):
            self._publish.set()

    def rebuild(self) -> None:
        """Build the zone from what the caches hold now and hand it to the resolver."""
        services = [s.to_dict() for s in self.services.store.list()]
        slices = [s.to_dict() for s in self.slices.store.list()]
        start = time.monotonic()
        self.resolver.zone = build_zone(services, slices, domain=self.domain, serial=int(time.time()))
        logger.debug("Zone rebuilt", extra={"services": len(services), "slices": len(slices),
                                            "ms": round((time.monotonic() - start) * 1000, 1)})

    async def run(self) -> None:
        """Watch, rebuild and publish until cancelled."""
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._factory.run())
            await self._factory.wait_for_cache_sync()
            self.rebuild()
            logger.info("Caches synced", extra={"services": len(self.services.store),
                                                "slices": len(self.slices.store)})
            self.synced.set()
            tg.create_task(self._rebuild_loop())
            if self.publisher is not None:
                tg.create_task(self._publish_loop(self.publisher))

    async def _rebuild_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            self.rebuild()

    async def _publish_loop(self, publisher: KubeDNSPublisher) -> None:
        while True:
            self._publish.clear()
            try:
                await publisher.ensure()
                wait = PUBLISH_RESYNC
            except (ApiError, httpx.TransportError) as e:
                logger.warning("Publishing kube-dns failed, will retry", extra={"error": str(e)})
                wait = PUBLISH_RETRY
            try:
                await asyncio.wait_for(self._publish.wait(), timeout=wait)
            except TimeoutError:
                pass
