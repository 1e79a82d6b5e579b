"""An event recorder: components say what they did as core/v1 Events, without waiting for it.

Mirrors client-go tools/record (EventRecorder, EventBroadcaster, EventCorrelator), reduced
to the parts users see:
- `recorder.event(obj, type_, reason, message)` never blocks and never raises: it builds the
  Event and queues it; `await recorder.run()` (one task, owned by the caller's TaskGroup)
  sends the queue in order. When the queue is full (a burst, an unreachable API server) new
  events are dropped and logged, as the broadcaster's channel does;
- repeats of the same event (involvedObject uid, reason, message, type) are aggregated the
  way EventCorrelator's EventLogger does it: the first is created, each later one PATCHes the
  existing Event's `count` and `lastTimestamp`; if that Event has gone (TTL, namespace
  cleanup) a fresh one is created, keeping the count;
- Event names are `<object-name>.<hex nanoseconds>`, like `fmt.Sprintf("%v.%x")` upstream;
  a cluster-scoped object's events live in `default`.
Failures to send are logged and the event is dropped after a few tries: events are
best-effort and must never hold up a controller.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from kube.api.base import KubeObject
from kube.api.core_v1 import Event
from kube.client import RESTClient
from kube.clock import Clock, RealClock
from kube.errors import ApiError, NotFound
from kube.timeutil import now_rfc3339

__all__ = ["EVENT_NORMAL", "EVENT_WARNING", "EventRecorder"]

logger = logging.getLogger(__name__)

EVENT_NORMAL = "Normal"
EVENT_WARNING = "Warning"

_QUEUE_SIZE = 1000
"""Pending events kept before new ones are dropped (client-go's maxQueuedEvents)."""
_CACHE_SIZE = 4096
"""Distinct events remembered for aggregation (client-go's maxLruCacheEntries)."""
_ATTEMPTS = 3
_RETRY_DELAY = 0.5


@dataclass(frozen=True)
class _Pending:
    involved: dict[str, Any]
    type_: str
    reason: str
    message: str


@dataclass(frozen=True)
class _Seen:
    """What the correlator remembers about an Event it has written."""

    namespace: str
    name: str
    count: int
    first_timestamp: str


_CorrelationKey = tuple[str, str, str, str, str, str, str]


class EventRecorder:
    """Records Events for one component; `event` is safe to call from any task of the loop."""

    def __init__(self, client: RESTClient, component: str = "controller-manager", host: str | None = None, *,
                 clock: Clock | None = None, now: Callable[[], str] = now_rfc3339) -> None:
        self._client = client
        self.component = component
        self.host = host
        self._clock: Clock = clock or RealClock()
        self._now = now
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=_QUEUE_SIZE)
        self._seen: OrderedDict[_CorrelationKey, _Seen] = OrderedDict()
        self._last_suffix = 0

    # --- what callers use ----------------------------------------------------------------
    def event(self, obj: KubeObject, type_: str, reason: str, message: str) -> None:
        """Queue one event about `obj`; returns at once; drops it (logged) if the queue is full."""
        if type_ not in (EVENT_NORMAL, EVENT_WARNING):
            logger.warning("Unsupported event type, dropped", extra={"type": type_, "reason": reason})
            return
        try:
            self._queue.put_nowait(_Pending(self._involved_object(obj), type_, reason, message))
        except asyncio.QueueFull:
            logger.warning("Event queue full, event dropped", extra={"object": obj.key, "reason": reason})

    async def run(self) -> None:
        """Send queued events until cancelled; never raises for a failed send."""
        while True:
            pending = await self._queue.get()
            try:
                await self._record(pending.involved, type_=pending.type_, reason=pending.reason,
                                   message=pending.message)
            finally:
                self._queue.task_done()

    async def flush(self) -> None:
        """Wait until every event queued so far has been sent or dropped (needs `run` running)."""
        await self._queue.join()

    # --- building and sending ------------------------------------------------------------
    @staticmethod
    def _involved_object(obj: KubeObject) -> dict[str, Any]:
        meta = getattr(obj, "metadata")  # noqa: B009 - declared by each kind, not KubeObject
        ref = {"apiVersion": obj.api_version or obj.info.api_version, "kind": obj.kind or obj.info.kind,
               "name": meta.name, "namespace": meta.namespace if obj.info.namespaced else None,
               "uid": meta.uid, "resourceVersion": meta.resource_version}
        return {k: v for k, v in ref.items() if v}

    def _event_name(self, object_name: str) -> str:
        suffix = max(time.time_ns(), self._last_suffix + 1)
        self._last_suffix = suffix
        return f"{object_name}.{suffix:x}"

    def _key(self, involved: dict[str, Any], type_: str, reason: str, message: str) -> _CorrelationKey:
        return (involved.get("uid") or f"{involved.get('kind')}/{involved.get('namespace')}/{involved.get('name')}",
                involved.get("kind", ""), type_, reason, message, self.component, self.host or "")

    async def _record(self, involved: dict[str, Any], *, type_: str, reason: str, message: str) -> None:
        key = self._key(involved, type_, reason, message)
        now = self._now()
        seen = self._seen.get(key)
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                written = await self._aggregate(seen, now) if seen is not None else None
                if written is None:
                    count, first = (seen.count + 1, seen.first_timestamp) if seen is not None else (1, None)
                    written = await self._create(involved, type_=type_, reason=reason, message=message, now=now,
                                                 count=count, first_timestamp=first)
                self._remember(key, written)
                return
            except (ApiError, httpx.TransportError) as e:
                if isinstance(e, ApiError) and e.code < 500 and e.code != 429:
                    logger.info("Event rejected, dropped", extra={"object": involved.get("name"), "reason": reason,
                                                                  "error": str(e)})
                    return
                logger.debug("Sending event failed", extra={"reason": reason, "attempt": attempt, "error": repr(e)})
                await self._clock.sleep(_RETRY_DELAY * attempt)
        logger.warning("Event dropped after retries", extra={"object": involved.get("name"), "reason": reason})

    async def _aggregate(self, seen: _Seen, now: str) -> _Seen | None:
        """PATCH count and lastTimestamp of the Event already written; None if it is gone."""
        count = seen.count + 1
        try:
            await self._client.patch_raw(Event.info, seen.name, {"count": count, "lastTimestamp": now}, seen.namespace)
        except NotFound:
            return None
        return _Seen(seen.namespace, seen.name, count, seen.first_timestamp)

    async def _create(self, involved: dict[str, Any], *, type_: str, reason: str, message: str, now: str,
                      count: int = 1, first_timestamp: str | None = None) -> _Seen:
        namespace = involved.get("namespace") or "default"
        name = self._event_name(str(involved.get("name", "unknown")))
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved, "reason": reason, "message": message, "type": type_,
            "count": count, "firstTimestamp": first_timestamp or now, "lastTimestamp": now,
            "source": {k: v for k, v in (("component", self.component), ("host", self.host)) if v},
            "reportingComponent": self.component, "reportingInstance": self.host or "",
        }
        await self._client.create_raw(Event.info, body, namespace)
        return _Seen(namespace, name, count, first_timestamp or now)

    def _remember(self, key: _CorrelationKey, seen: _Seen) -> None:
        self._seen[key] = seen
        self._seen.move_to_end(key)
        while len(self._seen) > _CACHE_SIZE:
            self._seen.popitem(last=False)

