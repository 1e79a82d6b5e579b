"""The watch fan-out of a traced write: when each watcher was sent the event.

The write's own span has ended by the time etcd's watch brings the change back to the watch
cache, so the fan-out is a span of its own, a child of the write (whose context the object
carries in its trace annotation). It starts when the cache dispatched the event and holds
one `sent` event per watcher, stamped when that watcher's stream wrote the event, naming
the watcher (its user). It ends when every watcher the event was queued for has written it,
or, for a watcher that went away or lags, when the cache sweeps it `_MAX_OPEN_SECONDS` later.

One span per traced write and one span event per watcher keep the cost far below a span
per watcher.
"""

from __future__ import annotations

import time
from collections import deque

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext

from kube.tracing import attrs, tracer

__all__ = ["FanOut", "FanOuts"]

_MAX_OPEN_SECONDS = 5.0


class FanOut:
    """One traced event's delivery to its watchers."""

    __slots__ = ("_done", "_parent", "_pending", "_sent", "dispatched", "object", "resource_version")

    def __init__(self, parent: SpanContext, obj: str, resource_version: int) -> None:
        self._parent, self.object, self.resource_version = parent, obj, resource_version
        self.dispatched = time.time_ns()
        self._pending = 0
        self._sent: list[tuple[str, int]] = []
        self._done = False

    def queued(self) -> None:
        """One more watcher will write the event."""
        self._pending += 1

    def sent(self, watcher: str) -> None:
        """`watcher`'s stream wrote the event; the last one ends the span."""
        if self._done:
            return
        self._sent.append((watcher, time.time_ns()))
        self._pending -= 1
        if self._pending <= 0:
            self.finish()

    @property
    def done(self) -> bool:
        return self._done

    def finish(self) -> None:
        """Record the span with the watchers served so far (nothing when none was queued)."""
        if self._done:
            return
        self._done = True
        if not self._sent and self._pending <= 0:
            return
        parent = trace.set_span_in_context(NonRecordingSpan(self._parent))
        span = tracer().start_span("watch fan-out", context=parent, start_time=self.dispatched, attributes={
            attrs.ACTOR: attrs.APISERVER, attrs.OBJECT: self.object, attrs.RESOURCE_VERSION: str(self.resource_version),
            "watch.watchers": len(self._sent) + max(0, self._pending), "watch.not_sent": max(0, self._pending)})
        for watcher, at in self._sent:
            span.add_event("sent", {"watcher": watcher, "seconds": (at - self.dispatched) / 1e9}, timestamp=at)
        span.end(end_time=self._sent[-1][1] if self._sent else time.time_ns())


class FanOuts:
    """The fan-outs of one watch cache still waiting for watchers, swept as new events arrive."""

    def __init__(self) -> None:
        self._open: deque[FanOut] = deque()

    def track(self, fanout: FanOut) -> None:
        if not fanout.done:
            self._open.append(fanout)
        self.sweep()

    def sweep(self, *, everything: bool = False) -> None:
        """End the fan-outs that are done or have waited too long (all of them with `everything`)."""
        horizon = time.time_ns() - int(_MAX_OPEN_SECONDS * 1e9)
        while self._open and (everything or self._open[0].done or self._open[0].dispatched < horizon):
            self._open.popleft().finish()
