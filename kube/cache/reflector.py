"""List, then watch from the list's resourceVersion; resume after a dropped stream; relist on 410.

Mirrors client-go tools/cache.Reflector. Guarantees to its sink:
- `replace(items, rv)` is called with a complete, consistent list before any event;
- events arrive in resourceVersion order and none is skipped: a watch that ends (server
  timeout, network error) resumes from the last resourceVersion seen, and only a 410 Gone
  (the revision was compacted) forces a fresh list, delivered again through `replace`;
- errors never escape `run()`; it retries until cancelled, waiting a jittered exponential
  backoff (0.8 s doubling to 30 s, on the injected clock) after a failed list or watch, a
  410, and a watch that ends at once without events (a server that closes every watch must
  not be hammered), but not after a watch that ran its course.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Generic, Protocol

import httpx

from kube.api.base import T_Object
from kube.backoff import ExponentialBackoff
from kube.client.rest import RESTClient
from kube.clock import Clock, RealClock
from kube.errors import ApiError, ResourceExpired

__all__ = ["SHORT_WATCH", "Reflector", "ReflectorSink"]

logger = logging.getLogger(__name__)

SHORT_WATCH = 1.0
"""A watch that ends sooner than this (seconds) without any event counts as failed and backs off."""


class ReflectorSink(Protocol[T_Object]):
    def replace(self, items: list[T_Object], resource_version: str) -> None: ...
    def on_event(self, type_: str, obj: T_Object) -> None: ...


class Reflector(Generic[T_Object]):
    """Keeps a sink in step with one (optionally namespaced and filtered) collection."""

    def __init__(self, client: RESTClient, cls: type[T_Object], sink: ReflectorSink[T_Object], *,
                 namespace: str | None = None, label_selector: str | None = None,
                 field_selector: str | None = None, watch_timeout: int = 300, page_size: int = 500,
                 clock: Clock | None = None, backoff: ExponentialBackoff | None = None) -> None:
        self.client, self.cls, self.sink = client, cls, sink
        self.namespace, self.label_selector, self.field_selector = namespace, label_selector, field_selector
        self.watch_timeout, self.page_size = watch_timeout, page_size
        self.clock = clock or RealClock()
        self.last_resource_version = ""
        self._backoff = backoff or ExponentialBackoff(self.clock)

    @property
    def _what(self) -> str:
        return self.cls.info.plural

    async def list_and_replace(self) -> None:
        page = await self.client.list_all(self.cls, self.namespace, page_size=self.page_size,
                                          label_selector=self.label_selector, field_selector=self.field_selector)
        self.sink.replace(page.items, page.resource_version)
        self.last_resource_version = page.resource_version

    async def watch_once(self) -> int:
        """One watch request from the last resourceVersion until the server ends it; return the events seen."""
        # Jitter the timeout so many informers do not all re-watch at the same instant.
        timeout = int(self.watch_timeout * (1 + random.random()))
        seen = 0
        async for ev in self.client.watch(self.cls, self.namespace, resource_version=self.last_resource_version,
                                          label_selector=self.label_selector,
                                          field_selector=self.field_selector, timeout_seconds=timeout):
            seen += 1
            if ev.resource_version:
                self.last_resource_version = ev.resource_version
            if ev.object is not None and ev.type in ("ADDED", "MODIFIED", "DELETED"):
                self.sink.on_event(ev.type, ev.object)
        return seen

    async def run(self) -> None:
        """List and watch forever; return only by cancellation."""
        need_list = True
        while True:
            try:
                if need_list:
                    await self.list_and_replace()
                    need_list = False
                started = self.clock.now()
                seen = await self.watch_once()
            except asyncio.CancelledError:
                raise
            except ResourceExpired:
                logger.info("Watch expired, relisting", extra={"resource": self._what})
                need_list = True
                await self.clock.sleep(self._backoff.next())
                continue
            except (ApiError, httpx.HTTPError, OSError, ValueError) as e:
                delay = self._backoff.next()
                logger.warning("List/watch failed, will retry",
                               extra={"resource": self._what, "error": repr(e), "backoff": round(delay, 3)})
                await self.clock.sleep(delay)
                continue
            if seen == 0 and self.clock.now() - started < SHORT_WATCH:
                delay = self._backoff.next()
                logger.info("Watch ended at once with no events, backing off",
                            extra={"resource": self._what, "backoff": round(delay, 3)})
                await self.clock.sleep(delay)
