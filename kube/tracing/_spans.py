"""Span helpers every component uses for its hops.

A hop (a reconcile, a scheduling attempt, a pod sync) is recorded lazily: `reconcile_span`
notes when it started and what caused it, and the span is only made once the hop does
something worth seeing: a write or a phase (`child_span`), a reason it could not do its
job, an error. A reaction that looked and changed nothing (most garbage-collector checks, a
sync that found the pod as it should be) costs a few attribute stores and records nothing,
so tracing's cost follows the work done, not the events seen.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from kube.tracing import attrs
from kube.tracing._propagation import Cause, _cause, cause_context
from kube.tracing._provider import tracer

__all__ = ["Hop", "child_span", "current_cause", "current_hop", "note_waiting", "phase", "reconcile_span",
           "write_span"]

AttributeValue = str | int | float | bool | list[str]


class Hop:
    """One hop of the chain, made into a span only when it matters (see the module docstring).

    Attributes and a status set on it are kept and written when the span is made; a status
    of ERROR or a `picokube.reason` attribute makes it by the end of the hop. `context()`
    makes it at once (with the hop's start time) and is what its writes and phases hang under;
    called after the hop ended, it makes the span already ended, so a task the hop started
    (a binding) still joins its trace.
    """

    __slots__ = ("_attributes", "_cause", "_ctx", "_end_ns", "_name", "_queued_wait", "_span", "_start_ns", "_status")

    def __init__(self, name: str, cause: Cause, parent: otel_context.Context, attributes: dict[str, Any]) -> None:
        self._name, self._cause, self._ctx = name, cause, parent
        self._attributes = attributes
        self._start_ns = time.time_ns()
        self._queued_wait: float | None = max(0.0, time.time() - cause.queued) if cause.queued else None
        self._span: trace.Span | None = None
        self._status: Status | None = None
        self._end_ns: int | None = None


    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._attributes[key] = value
        if self._span is not None:
            self._span.set_attribute(key, value)

    def set_attributes(self, values: dict[str, AttributeValue]) -> None:
        for key, value in values.items():
            self.set_attribute(key, value)

    def set_status(self, code: StatusCode, description: str | None = None) -> None:
        self._status = Status(code, description)
        if self._span is not None:
            self._span.set_status(self._status)

    def is_recording(self) -> bool:
        """Whether the hop's span exists (it records everything set on the hop from then on)."""
        return self._span is not None

    def span_context(self) -> trace.SpanContext:
        """The hop's span context; makes the hop's span if it does not exist yet."""
        return self._materialize().get_span_context()

    def context(self) -> otel_context.Context:
        """The context the hop's children start in; makes the hop's span if it does not exist yet."""
        return trace.set_span_in_context(self._materialize())

    def _materialize(self) -> trace.Span:
        if self._span is None:
            span = tracer().start_span(self._name, context=self._ctx, start_time=self._start_ns,
                                       attributes=self._attributes, record_exception=False)
            cause = self._cause
            if cause.object:
                span.set_attributes({attrs.REACTED_EVENT: cause.event, attrs.REACTED_OBJECT: cause.object,
                                     attrs.REACTED_RV: cause.resource_version, attrs.DELIVERED: cause.delivered})
            if self._queued_wait is not None:
                span.set_attribute(attrs.QUEUED, self._queued_wait)
            if self._status is not None:
                span.set_status(self._status)
            self._span = span
            if self._end_ns is not None:
                span.end(end_time=self._end_ns)
        return self._span

    def note_waiting(self, reason: str) -> None:
        span = tracer().start_span(f"{self._name} (waiting)", context=self._ctx,
                                   attributes={**self._attributes, attrs.REASON: reason})
        span.end()

    def _finish(self) -> None:
        self._end_ns = time.time_ns()
        failed = self._status is not None and self._status.status_code is StatusCode.ERROR
        if self._span is None and (failed or attrs.REASON in self._attributes):
            self._materialize()
        if self._span is not None:
            self._span.end(end_time=self._end_ns)


_hop: contextvars.ContextVar[Hop | None] = contextvars.ContextVar("picokube_hop", default=None)


def current_hop() -> Hop | None:
    """The hop the running code belongs to, if it is traced."""
    return _hop.get()


@contextlib.contextmanager
def reconcile_span(name: str, cause: Cause | None, *, actor: str, obj: str) -> Iterator[Hop | None]:
    """A hop, child of `cause`; without a cause there is no hop (yields None).

    Work without a cause (a resync, a timer) continues no trace and starts none, so
    periodic re-checks do not flood the collector.
    """
    ctx = cause_context(cause)
    if ctx is None or cause is None:
        yield None
        return
    hop = Hop(name, cause, ctx, {attrs.ACTOR: actor, attrs.OBJECT: obj, attrs.HOP: True})
    token = _hop.set(hop)
    try:
        yield hop
    finally:
        _hop.reset(token)
        hop._finish()


def current_cause() -> Cause | None:
    """The cause to queue work under: the event being handled, else the running hop or span (a retry).

    A retry continues the trace of the hop that failed, so the hop's span is made here.
    """
    cause = _cause.get()
    if cause is not None:
        return cause
    hop = _hop.get()
    if hop is not None:
        return Cause(hop.span_context())
    sc = trace.get_current_span().get_span_context()
    return Cause(sc) if sc.is_valid else None


def note_waiting(reason: str) -> None:
    """Record at once that the running hop waits on something slow (an image pull).

    A hop's span is only exported when it ends, so a long wait would be invisible while it
    lasts; this records a short hop of its own beside it (same actor, object and cause)
    carrying `reason`, which `pkctl trace` shows as what the object waits on until the hop
    itself ends.
    """
    hop = _hop.get()
    if hop is not None:
        hop.note_waiting(reason)


def _parent() -> otel_context.Context | None:
    """Where a child of the running code starts: its hop, else the current span; None if untraced."""
    hop = _hop.get()
    if hop is not None:
        return hop.context()
    if trace.get_current_span().get_span_context().is_valid:
        return otel_context.get_current()
    return None


@contextlib.contextmanager
def child_span(name: str, **attributes: AttributeValue) -> Iterator[trace.Span | None]:
    """A child of the current hop or span when the work is traced; nothing otherwise (yields None).

    For a hop's phases (a CRI call, a binding): untraced work pays for one context lookup,
    no span. The parent may have ended already (a binding started by a scheduling cycle):
    the child still joins its trace.
    """
    with _child(name, trace.SpanKind.INTERNAL, attributes) as span:
        yield span


@contextlib.contextmanager
def phase(name: str) -> Iterator[dict[str, AttributeValue] | None]:
    """A phase of the current span (authorize, admission, the etcd write) as a timed event on it.

    Cheaper than a child span and enough for a phase that does no I/O of its own worth
    following: the event is stamped with the phase's start and carries `seconds`, its
    duration, plus whatever the block puts in the yielded dict. Yields None when untraced.
    """
    span = trace.get_current_span()
    if not span.is_recording():
        yield None
        return
    start = time.time_ns()
    details: dict[str, AttributeValue] = {}
    try:
        yield details
    finally:
        details["seconds"] = (time.time_ns() - start) / 1e9
        span.add_event(name, details, timestamp=start)


@contextlib.contextmanager
def write_span(method: str, path: str) -> Iterator[trace.Span | None]:
    """A client span for a write a traced hop makes (the request then carries its traceparent)."""
    with _child(f"{method} {path}", trace.SpanKind.CLIENT, {attrs.VERB: method}) as span:
        yield span


@contextlib.contextmanager
def _child(name: str, kind: trace.SpanKind, attributes: dict[str, AttributeValue]) -> Iterator[trace.Span | None]:
    parent = _parent()
    if parent is None:
        yield None
        return
    token = _hop.set(None)  # below this span, the span is the parent
    try:
        with tracer().start_as_current_span(name, context=parent, kind=kind, record_exception=False,
                                            attributes=attributes) as span:
            yield span
    finally:
        _hop.reset(token)
