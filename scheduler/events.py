"""Best-effort core/v1 Events about pods (`Scheduled`, `FailedScheduling`), never in the way.

A reduced client-go `tools/record` EventRecorder plus its EventCorrelator:
- `record(...)` only puts the event on a bounded in-memory queue and returns; when the queue
  is full the event is dropped (and counted in the log), so a slow or absent API server
  never slows scheduling;
- `run()` writes queued events one at a time; a failed write is logged and dropped;
- repeats of the same event (same object uid, type, reason and message) are aggregated into
  one Event object whose `count` and `lastTimestamp` are PATCHed, as `kubectl describe`
  expects, instead of one new object per retry of an unschedulable pod.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

import httpx

from kube.api import Event, EventSource, ObjectMeta, ObjectReference, Pod
from kube.client import RESTClient
from kube.clock import now_rfc3339
from kube.errors import ApiError, NotFound

__all__ = ["EventRecorder", "NORMAL", "WARNING"]

logger = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True)
class _Pending:
    ref: ObjectReference
    type: str
    reason: str
    message: str


@dataclass
class _Seen:
    name: str
    count: int


class EventRecorder:
    """Records events for objects on behalf of one component."""

    def __init__(self, client: RESTClient, *, component: str, max_pending: int = 1000,
                 max_correlated: int = 4096) -> None:
        self._client = client
        self._component = component
        self._pending: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=max_pending)
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        self._max_correlated = max_correlated
        self._dropped = 0

    def record(self, pod: Pod, *, type_: str, reason: str, message: str) -> None:
        """Queue an event about `pod`; never blocks, never raises."""
        ref = ObjectReference(api_version="v1", kind="Pod", namespace=pod.metadata.namespace,
                              name=pod.metadata.name, uid=pod.metadata.uid,
                              resource_version=pod.metadata.resource_version)
        try:
            self._pending.put_nowait(_Pending(ref, type_, reason, message))
        except asyncio.QueueFull:
            self._dropped += 1
            if self._dropped % 100 == 1:
                logger.warning("Event queue full, dropping events", extra={"dropped": self._dropped})

    async def run(self) -> None:
        """Write queued events until cancelled."""
        while True:
            item = await self._pending.get()
            try:
                await self._write(item)
            except (ApiError, httpx.HTTPError, OSError, ValueError) as e:
                logger.debug("Writing event failed, dropped", extra={"reason": item.reason, "error": repr(e)})
            except Exception as e:  # a loop boundary: events are best effort
                logger.warning("Writing event failed, dropped", extra={"reason": item.reason, "error": repr(e)})

    async def _write(self, item: _Pending) -> None:
        key = (str(item.ref.namespace), str(item.ref.uid or item.ref.name), item.type, item.reason, item.message)
        now = now_rfc3339()
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
            try:
                await self._client.patch(Event, seen.name, {"count": seen.count + 1, "lastTimestamp": now},
                                         item.ref.namespace)
                seen.count += 1
                return
            except NotFound:
                del self._seen[key]
        name = f"{item.ref.name}.{time.time_ns():x}"
        await self._client.create(Event(
            metadata=ObjectMeta(name=name, namespace=item.ref.namespace),
            involved_object=item.ref, reason=item.reason, message=item.message, type=item.type,
            count=1, first_timestamp=now, last_timestamp=now,
            source=EventSource(component=self._component), reporting_component=self._component))
        self._seen[key] = _Seen(name, 1)
        while len(self._seen) > self._max_correlated:
            self._seen.popitem(last=False)
