"""Span helpers every component uses for its hops."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from opentelemetry import trace

from kube.tracing import attrs
from kube.tracing._propagation import Cause, cause_context
from kube.tracing._provider import tracer

__all__ = ["child_span", "reconcile_span", "record_cause"]


def record_cause(span: trace.Span, cause: Cause) -> None:
    """Write what woke a hop on its span: the event, the object and its resourceVersion, the waits."""
    if not span.is_recording():
        return
    if cause.object:
        span.set_attribute(attrs.REACTED_EVENT, cause.event)
        span.set_attribute(attrs.REACTED_OBJECT, cause.object)
        span.set_attribute(attrs.REACTED_RV, cause.resource_version)
        span.set_attribute(attrs.DELIVERED, cause.delivered)
    if cause.queued:
        span.set_attribute(attrs.QUEUED, max(0.0, time.time() - cause.queued))


@contextlib.contextmanager
def reconcile_span(name: str, cause: Cause | None, *, actor: str, obj: str) -> Iterator[trace.Span | None]:
    """A hop's span, child of `cause`; without a cause no span is made (yields None).

    Work without a cause (a resync, a timer) continues no trace and starts none, so
    periodic re-checks do not flood the collector.
    """
    ctx = cause_context(cause)
    if ctx is None or cause is None:
        yield None
        return
    with tracer().start_as_current_span(name, context=ctx, record_exception=False,
                                        attributes={attrs.ACTOR: actor, attrs.OBJECT: obj, attrs.HOP: True}) as span:
        record_cause(span, cause)
        yield span


@contextlib.contextmanager
def child_span(name: str, **attributes: str | int | float | bool) -> Iterator[trace.Span | None]:
    """A child of the current span when the work is traced; nothing otherwise (yields None).

    For the phases of a hop (authorize, admission, the etcd write, a CRI call): untraced work
    pays for one context lookup, no span. The parent may have ended already (a binding
    started by a scheduling cycle): the child still joins its trace.
    """
    if not trace.get_current_span().get_span_context().is_valid:
        yield None
        return
    with tracer().start_as_current_span(name, record_exception=False, attributes=attributes) as span:
        yield span
