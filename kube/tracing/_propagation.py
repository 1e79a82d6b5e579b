"""Causality across the watch: the trace context of the write that made an object, kept on the object.

A watch delivers state, not requests: nothing of the HTTP request that wrote an object
reaches the controller that later reacts to it. So the API server records the W3C
`traceparent` of each write in the object itself, as the annotation `TRACE_ANNOTATION`, and
every component that reacts to the object continues that trace (KEP-5915 proposes the same
for upstream). An annotation rather than a field: it needs no schema change to any kind,
every client already carries and ignores unknown annotations, and it survives a relist and a
component restart because it lives in etcd with the object.

Invariants:
- the annotation is owned by the API server: it is set on every traced write and a client's
  own value is overwritten (`stamp`);
- `Cause` is what a work queue keeps per key: the span context that woke it, what the event
  was, and when it was queued. Only a real change carries a cause; a resync (same
  resourceVersion) does not, so a periodic re-check never joins an old trace.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

__all__ = [
    "TRACE_ANNOTATION",
    "TRACEPARENT",
    "Cause",
    "cause_context",
    "current_traceparent",
    "extract_traceparent",
    "object_ref",
    "span_context_of",
    "stamp",
    "traceparent_of",
    "woken_by",
]

TRACE_ANNOTATION = "picokube.dev/trace-context"
TRACEPARENT = "traceparent"
_PROPAGATOR = TraceContextTextMapPropagator()


@dataclass(frozen=True)
class Cause:
    """Why a key was queued: the trace it continues and the watch event behind it."""

    span_context: SpanContext
    event: str = ""
    object: str = ""
    resource_version: str = ""
    delivered: float = 0.0
    queued: float = 0.0


_cause: contextvars.ContextVar[Cause | None] = contextvars.ContextVar("picokube_cause", default=None)
"""The event being handled (`woken_by`), read by `current_cause`."""


def object_ref(kind: str, namespace: str | None, name: str | None) -> str:
    """`Kind/namespace/name` (`Kind/name` when cluster-scoped): how spans name an object."""
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def current_traceparent() -> str | None:
    """The `traceparent` of the current span, or None when there is no valid one."""
    sc = trace.get_current_span().get_span_context()
    return f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{sc.trace_flags:02x}" if sc.is_valid else None


def extract_traceparent(value: str | None) -> SpanContext | None:
    """The span context a `traceparent` value names, or None when it is missing or malformed.

    Every informer event of a traced object comes through here, so the common form
    (version 00, as this project writes it) is parsed directly; any other goes through the
    W3C propagator.
    """
    if not value:
        return None
    parts = value.split("-")
    if len(parts) == 4 and parts[0] == "00" and len(parts[1]) == 32 and len(parts[2]) == 16 and len(parts[3]) == 2:
        try:
            trace_id, span_id, flags = int(parts[1], 16), int(parts[2], 16), int(parts[3], 16)
        except ValueError:
            return None
        if not trace_id or not span_id:
            return None
        return SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(flags))
    ctx = _PROPAGATOR.extract({TRACEPARENT: value})
    sc = trace.get_current_span(ctx).get_span_context()
    return sc if sc.is_valid else None


def traceparent_of(meta: Mapping[str, Any] | None) -> str | None:
    """The traceparent recorded on an object's metadata (a dict), if any."""
    annotations = (meta or {}).get("annotations") or {}
    value = annotations.get(TRACE_ANNOTATION) if isinstance(annotations, Mapping) else None
    return value if isinstance(value, str) else None


def span_context_of(annotations: Mapping[str, str] | None) -> SpanContext | None:
    """The span context recorded in an object's annotations, if any."""
    return extract_traceparent((annotations or {}).get(TRACE_ANNOTATION))


def stamp(meta: MutableMapping[str, Any], old_meta: Mapping[str, Any] | None = None) -> None:
    """Record the current trace context on `meta`; without one, keep what `old_meta` had.

    A client never decides the value: whatever it sent is replaced.
    """
    value = current_traceparent() or traceparent_of(old_meta)
    annotations = meta.get("annotations")
    if value is None:
        if isinstance(annotations, dict):
            annotations.pop(TRACE_ANNOTATION, None)
            if not annotations:
                meta.pop("annotations", None)
        return
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[TRACE_ANNOTATION] = value


@contextlib.contextmanager
def woken_by(annotations: Mapping[str, str] | None, *, event: str, obj: str, resource_version: str) -> Iterator[None]:
    """Run the block (event handlers) as caused by the write recorded in `annotations`.

    Work queued inside picks it up with `current_cause()`. Without a recorded context the
    block runs with no cause.
    """
    sc = span_context_of(annotations)
    if sc is None:
        yield
        return
    token = _cause.set(Cause(sc, event, obj, resource_version, time.time()))
    try:
        yield
    finally:
        _cause.reset(token)


def cause_context(cause: Cause | None) -> otel_context.Context | None:
    """An OpenTelemetry context whose parent is `cause` (None: start no trace)."""
    if cause is None:
        return None
    return trace.set_span_in_context(NonRecordingSpan(cause.span_context))
