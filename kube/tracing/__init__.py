"""Tracing shared by every component: OpenTelemetry with W3C trace context, on by default.

`_provider` sets up a process's tracer provider and exporters; `_propagation` carries a
trace across the watch in the `picokube.dev/trace-context` annotation and through work
queues as a `Cause`; `attrs` names the span attributes every component writes, so the
collector and `pkctl trace` can read any component's spans the same way.
"""

from kube.tracing import attrs
from kube.tracing._propagation import (
    TRACE_ANNOTATION,
    TRACEPARENT,
    Cause,
    cause_context,
    current_traceparent,
    extract_traceparent,
    object_ref,
    span_context_of,
    stamp,
    traceparent_of,
    woken_by,
)
from kube.tracing._provider import (
    OTLP_PATH,
    ApiServerSpanExporter,
    TracingConfig,
    setup_tracing,
    shutdown_tracing,
    tracer,
)
from kube.tracing._spans import (
    Hop,
    child_span,
    current_cause,
    current_hop,
    note_waiting,
    phase,
    reconcile_span,
    write_span,
)

__all__ = [
    "TRACE_ANNOTATION",
    "TRACEPARENT",
    "OTLP_PATH",
    "ApiServerSpanExporter",
    "Cause",
    "Hop",
    "TracingConfig",
    "attrs",
    "cause_context",
    "child_span",
    "current_cause",
    "current_hop",
    "current_traceparent",
    "extract_traceparent",
    "note_waiting",
    "object_ref",
    "phase",
    "reconcile_span",
    "setup_tracing",
    "shutdown_tracing",
    "span_context_of",
    "stamp",
    "traceparent_of",
    "tracer",
    "woken_by",
    "write_span",
]
