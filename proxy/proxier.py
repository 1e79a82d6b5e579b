"""The proxy's control loop: watch Services and EndpointSlices, sync the model to a backend.

Mirrors kube-proxy's Proxier with its BoundedFrequencyRunner (pkg/proxy/iptables/proxier.go,
pkg/util/async): every watch event only marks the state dirty and wakes the loop; the loop
computes the whole model from the informer caches (level-triggered, never from the event)
and hands it to the backend. Syncs are rate-limited: at least `min_sync_period` apart, so a
burst of changes (a Deployment scaling up) is coalesced into one rewrite, and at most
`sync_period` apart, so rules someone else removed come back (a full sync). A failed sync
is retried after `min_sync_period`. Until both caches have synced nothing is programmed,
so a restarting proxy never writes a half-empty rule set over a good one.

Only Services and slices without the `service.kubernetes.io/service-proxy-name` label are
proxied (they belong to another proxy), as upstream selects them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from kube.api.base import KubeObject
from kube.api.registry import dynamic_model
from kube.cache import EventHandler, InformerFactory, SharedInformer
from kube.client import RESTClient
from kube.resources import ResourceInfo, resource_for_kind
from kube.timeutil import parse_time
from proxy.backend import Backend
from proxy.config import ProxyConfig
from proxy.metrics import ProxyMetrics
from proxy.model import ProxyModel, build_model
from proxy.status import status_document, write_status_file

__all__ = ["Proxier", "SERVICE_PROXY_NAME_LABEL"]

logger = logging.getLogger(__name__)

SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name"
HEADLESS_LABEL = "service.kubernetes.io/headless"
TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time"
STANDBY_RETRY = 1.0  # seconds between attempts to take over a network namespace another proxy programs


def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None, kind
    return found


SERVICES = _info("v1", "Service")
ENDPOINT_SLICES = _info("discovery.k8s.io/v1", "EndpointSlice")


class Proxier:
    """One node's proxy: informers, the sync loop and what it last programmed."""

    def __init__(self, config: ProxyConfig, client: RESTClient, backend: Backend, *,
                 metrics: ProxyMetrics | None = None) -> None:
        self.config, self.backend = config, backend
        self.metrics = metrics or ProxyMetrics()
        factory = InformerFactory(client)
        self._factory = factory
        self.services: SharedInformer[KubeObject] = factory.informer_for(
            dynamic_model(SERVICES), label_selector=f"!{SERVICE_PROXY_NAME_LABEL}")
        self.slices: SharedInformer[KubeObject] = factory.informer_for(
            dynamic_model(ENDPOINT_SLICES), label_selector=f"!{SERVICE_PROXY_NAME_LABEL},!{HEADLESS_LABEL}")
        self.services.add_event_handler(EventHandler(on_add=self._service_changed,
                                                     on_update=lambda _, new: self._service_changed(new),
                                                     on_delete=self._service_changed))
        self.slices.add_event_handler(EventHandler(on_add=self._slice_changed,
                                                   on_update=lambda _, new: self._slice_changed(new),
                                                   on_delete=self._slice_changed))
        self._wake = asyncio.Event()
        self._pending_since: float | None = None
        self._triggers: list[float] = []
        self.last_sync: float | None = None

    # --- event handlers: mark dirty, never block ------------------------------------------
    def _queue(self) -> None:
        if self._pending_since is None:
            self._pending_since = time.time()
            self.metrics.last_queued.set(self._pending_since)
        self._wake.set()

    def _service_changed(self, _: KubeObject) -> None:
        self.metrics.service_changes.inc()
        self._queue()

    def _slice_changed(self, obj: KubeObject) -> None:
        self.metrics.endpoint_changes.inc()
        when = parse_time((obj.metadata.annotations or {}).get(TRIGGER_TIME_ANNOTATION))
        if when is not None:
            self._triggers.append(when.timestamp())
        self._queue()

    # --- health and report ------------------------------------------------------------------
    def healthy(self) -> bool:
        """False once a change has waited more than two sync periods (kube-proxy's healthz rule)."""
        pending = self._pending_since
        return pending is None or time.time() - pending < 2 * self.config.sync_period

    def status(self) -> dict[str, Any]:
        return status_document(mode=self.backend.mode, node_name=self.config.node_name,
                               programmed=self.backend.programmed, last_sync=self.last_sync, healthy=self.healthy())

    def model(self) -> ProxyModel:
        """The model of what the caches hold now."""
        return build_model((s.to_dict() for s in self.services.store.list()),
                           (s.to_dict() for s in self.slices.store.list()),
                           local_nodes=frozenset({self.config.node_name}))

    # --- the loop -----------------------------------------------------------------------------
    async def run(self) -> None:
        """Watch and sync until cancelled."""
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._factory.run())
            await self._factory.wait_for_cache_sync()
            logger.info("Caches synced", extra={"node": self.config.node_name, "mode": self.backend.mode})
            self._queue()
            tg.create_task(self._sync_loop())

    async def _sync_loop(self) -> None:
        last_full = last_attempt = float("-inf")
        while True:
            now = time.monotonic()
            wait = self.config.sync_period - (now - last_full)
            if not self.backend.programmed.programming and self.backend.programmed.rules is not None:
                wait = min(wait, STANDBY_RETRY)
            if wait > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                except TimeoutError:
                    pass
            delay = self.config.min_sync_period - (time.monotonic() - last_attempt)
            if delay > 0:
                await asyncio.sleep(delay)  # coalesce the burst that woke us
            self._wake.clear()
            full = time.monotonic() - last_full >= self.config.sync_period
            last_attempt = time.monotonic()
            if await self._sync(full=full) and full:
                last_full = last_attempt

    async def _sync(self, *, full: bool) -> bool:
        """One sync of the whole model; True on success (a failure is retried by the loop)."""
        pending, triggers = self._pending_since, self._triggers
        self._pending_since, self._triggers = None, []
        start = time.monotonic()
        try:
            await self.backend.sync(self.model(), full=full)
        except Exception as e:  # noqa: BLE001 - the loop boundary: log, keep the changes pending, retry
            logger.error("Syncing proxy rules failed, will retry", extra={"error": str(e)})
            self.metrics.restore_failures.inc()
            self._pending_since = pending if pending is not None else time.time()
            self._triggers = triggers + self._triggers
            self._wake.set()
            return False
        self.metrics.sync_duration.observe(time.monotonic() - start)
        self.last_sync = time.time()
        self.metrics.last_sync.set(self.last_sync)
        programmed = self.backend.programmed
        if programmed.rules is not None:
            self.metrics.rules.labels(table="nat").set(programmed.rules.nat_rules)
            self.metrics.rules.labels(table="filter").set(programmed.rules.filter_rules)
        if programmed.programming:
            for when in triggers:
                self.metrics.programming_duration.observe(max(0.0, self.last_sync - when))
        if self.config.status_file is not None:
            write_status_file(self.config.status_file, self.status())
        return True
