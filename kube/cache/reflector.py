"""List, then watch from the list's resourceVersion; resume after a dropped stream; relist on 410.

Mirrors client-go tools/cache.Reflector. Guarantees to its sink:
- `replace(items, rv)` is called with a complete, consistent list before any event;
- events arrive in resourceVersion order and none is skipped: a watch that ends (server
  timeout, network error) resumes from the last resourceVersion seen, and only a 410 Gone
  (the revision was compacted) forces a fresh list, delivered again through `replace`;
- one object the typed model cannot decode (a field it does not accept, say) never stops
  the rest: it is left out of the list, its watch events are skipped (its deletion still
  reaches the sink through `forget`), and it is logged once with its key and the error
  until it decodes again, as client-go's reflector skips an object it cannot convert;
- errors never escape `run()`; it retries until cancelled, waiting a jittered exponential
  backoff (0.8 s doubling to 30 s, on the injected clock) after a failed list or watch, a
  410, and a watch that ends at once without events (a server that closes every watch must
  not be hammered), but not after a watch that ran its course.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Generic, Protocol

import httpx
from pydantic import ValidationError

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
    def forget(self, key: str) -> None:
        """The object under `key` (`namespace/name`) was deleted, but its last state could not be decoded."""
        ...


def _key_of(raw: dict[str, Any]) -> str:
    """The cache key (`namespace/name` or `name`) of an object that may not decode."""
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        return "<no metadata>"
    namespace, name = meta.get("namespace"), meta.get("name")
    return f"{namespace}/{name}" if namespace else str(name)


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
        self._undecodable: set[str] = set()  # keys logged as undecodable and not decoded since

    @property
    def _what(self) -> str:
        return self.cls.info.plural

    def _decode(self, raw: dict[str, Any]) -> T_Object | None:
        """The typed object, or None (logged once per key) when the model refuses it."""
        key = _key_of(raw)
        try:
            obj = self.cls.model_validate(raw)
        except (ValidationError, ValueError, TypeError) as e:
            if key not in self._undecodable:
                self._undecodable.add(key)
                logger.error("Skipping an object that cannot be decoded",
                             extra={"resource": self._what, "key": key, "error": str(e)})
            return None
        self._undecodable.discard(key)
        return obj

    async def list_and_replace(self) -> None:
        """Read the whole collection (following `continue`, one snapshot) and hand it to the sink."""
        items: list[T_Object] = []
        token: str | None = None
        while True:
            page = await self.client.list_raw(self.cls.info, self.namespace, label_selector=self.label_selector,
                                              field_selector=self.field_selector, limit=self.page_size,
                                              continue_token=token)
            items.extend(obj for raw in page.get("items") or [] if (obj := self._decode(raw)) is not None)
            meta = page.get("metadata") or {}
            token = meta.get("continue") or None
            if not token:
                break
        resource_version = str(meta.get("resourceVersion", ""))
        self.sink.replace(items, resource_version)
        self.last_resource_version = resource_version

    async def watch_once(self) -> int:
        """One watch request from the last resourceVersion until the server ends it; return the events seen."""
        # Jitter the timeout so many informers do not all re-watch at the same instant.
        timeout = int(self.watch_timeout * (1 + random.random()))
        seen = 0
        async for ev in self.client.watch_raw(self.cls.info, self.namespace,
                                              resource_version=self.last_resource_version,
                                              label_selector=self.label_selector,
                                              field_selector=self.field_selector, timeout_seconds=timeout):
            seen += 1
            raw = ev.get("object")
            if not isinstance(raw, dict):
                raw = {}
            meta = raw.get("metadata")
            resource_version = str(meta.get("resourceVersion", "")) if isinstance(meta, dict) else ""
            if resource_version:
                self.last_resource_version = resource_version
            type_ = ev.get("type")
            if type_ not in ("ADDED", "MODIFIED", "DELETED") or not raw:
                continue
            obj = self._decode(raw)
            if obj is not None:
                self.sink.on_event(type_, obj)
            elif type_ == "DELETED":
                self._undecodable.discard(_key_of(raw))
                self.sink.forget(_key_of(raw))
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
