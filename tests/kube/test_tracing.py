"""Trace context across the watch: through the object's annotation and through the work queue."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from kube.controller import Request, Result, run_workers
from kube.tracing import (
    TRACE_ANNOTATION,
    child_span,
    current_cause,
    current_hop,
    current_traceparent,
    extract_traceparent,
    stamp,
    tracer,
    woken_by,
)
from kube.tracing import attrs as a
from kube.workqueue import WorkQueue

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER


def test_stamp_records_the_current_span_and_replaces_a_clients_value(spans: InMemorySpanExporter) -> None:
    meta: dict[str, object] = {"annotations": {TRACE_ANNOTATION: "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}}
    with tracer().start_as_current_span("write") as span:
        stamp(meta)
    recorded = extract_traceparent(meta["annotations"][TRACE_ANNOTATION])  # type: ignore[index]
    assert recorded is not None
    assert recorded.trace_id == span.get_span_context().trace_id
    assert recorded.span_id == span.get_span_context().span_id


def test_stamp_without_a_trace_keeps_the_old_value_or_drops_a_clients() -> None:
    old = {"annotations": {TRACE_ANNOTATION: "00-" + "a" * 32 + "-" + "b" * 16 + "-01"}}
    meta: dict[str, object] = {"annotations": {TRACE_ANNOTATION: "forged", "x": "y"}}
    stamp(meta, old)
    assert meta["annotations"] == {TRACE_ANNOTATION: old["annotations"][TRACE_ANNOTATION], "x": "y"}
    created: dict[str, object] = {"annotations": {TRACE_ANNOTATION: "forged"}}
    stamp(created)
    assert "annotations" not in created


def test_a_handler_woken_by_a_traced_object_queues_its_cause(spans: InMemorySpanExporter) -> None:
    with tracer().start_as_current_span("apiserver write"):
        annotations = {TRACE_ANNOTATION: current_traceparent() or ""}
    assert current_cause() is None
    queue: WorkQueue[str] = WorkQueue()
    with woken_by(annotations, event="MODIFIED", obj="Deployment/default/web", resource_version="42"):
        queue.add("default/web")
    queue.add("default/untraced")
    cause = queue.take_cause("default/web")
    assert cause is not None and cause.object == "Deployment/default/web" and cause.resource_version == "42"
    assert cause.span_context == extract_traceparent(annotations[TRACE_ANNOTATION])
    assert queue.take_cause("default/untraced") is None


async def test_a_reconcile_continues_the_trace_of_the_change_that_woke_it(spans: InMemorySpanExporter) -> None:
    with tracer().start_as_current_span("apiserver write") as write:
        annotations = {TRACE_ANNOTATION: current_traceparent() or ""}
    queue: WorkQueue[str] = WorkQueue()
    retried: list[int] = []

    async def reconcile(req: Request) -> Result | None:
        if not retried:
            retried.append(1)
            raise RuntimeError("once more")  # the retry keeps the trace
        with child_span("write"):  # the retry does something, so its hop is recorded
            pass
        await queue.shut_down()
        return None

    with woken_by(annotations, event="ADDED", obj="ReplicaSet/default/web-1", resource_version="7"):
        queue.add("default/web-1")
    queue.rate_limiter.when = lambda item: 0.0  # type: ignore[method-assign]
    await asyncio.wait_for(run_workers("replicaset", queue, reconcile), timeout=5)
    trace_id = write.get_span_context().trace_id
    hops = [s for s in spans.get_finished_spans() if s.name == "reconcile replicaset"]
    assert len(hops) == 2
    assert all(h.context.trace_id == trace_id for h in hops)
    first = hops[0]
    assert first.parent is not None and first.parent.span_id == write.get_span_context().span_id
    assert first.attributes is not None
    assert first.attributes[a.ACTOR] == "replicaset-controller"
    assert first.attributes[a.REACTED_OBJECT] == "ReplicaSet/default/web-1"
    assert first.attributes[a.REACTED_RV] == "7"
    assert first.status.status_code is StatusCode.ERROR
    assert hops[1].parent is not None and hops[1].parent.span_id == first.context.span_id
    (child,) = [s for s in spans.get_finished_spans() if s.name == "write"]
    assert child.parent is not None and child.parent.span_id == hops[1].context.span_id
    assert first.start_time is not None and child.start_time is not None and first.start_time < child.start_time


async def test_a_reconcile_that_changes_nothing_records_no_hop(spans: InMemorySpanExporter) -> None:
    with tracer().start_as_current_span("apiserver write"):
        annotations = {TRACE_ANNOTATION: current_traceparent() or ""}
    queue: WorkQueue[str] = WorkQueue()
    ran: list[bool] = []

    async def reconcile(req: Request) -> Result | None:
        hop = current_hop()
        ran.append(hop is not None and not hop.is_recording())
        await queue.shut_down()
        return None

    with woken_by(annotations, event="MODIFIED", obj="Pod/default/web-1", resource_version="9"):
        queue.add("default/web-1")
    await asyncio.wait_for(run_workers("garbagecollector", queue, reconcile), timeout=5)
    assert ran == [True]
    assert [s.name for s in spans.get_finished_spans()] == ["apiserver write"]


async def test_a_resync_starts_no_trace(spans: InMemorySpanExporter) -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("default/web")
    assert queue.take_cause("default/web") is None
