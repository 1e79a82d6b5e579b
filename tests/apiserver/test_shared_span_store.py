"""API servers behind a balancer share one span file: each answers for spans the other received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from apiserver.tracing import SpanStore


def _span(trace: str, span: str, start: int) -> dict[str, Any]:
    return {"traceId": trace, "spanId": span, "parentSpanId": "", "name": f"op-{span}", "service": "kubelet",
            "start": start, "end": start + 1, "attributes": {}}


def test_each_server_sees_the_whole_trace(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    now = 1_000_000_000 * 2_000_000_000
    one, two = SpanStore(path), SpanStore(path)
    one.add([_span("t1", "a", now)])
    two.add([_span("t1", "b", now + 5)])
    assert [s["spanId"] for s in one.trace("t1")] == ["a", "b"]
    assert [s["spanId"] for s in two.trace("t1")] == ["a", "b"]
    assert [t["spans"] for t in one.recent()] == [2]
    # A third server started later reads everything once, without duplicates.
    assert [s["spanId"] for s in SpanStore(path).trace("t1")] == ["a", "b"]
