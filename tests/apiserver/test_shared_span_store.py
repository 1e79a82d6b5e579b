"""API servers behind a balancer share one span file: each answers for spans the other received."""

from __future__ import annotations

import time
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


def test_the_oldest_traces_go_first_past_the_byte_budget_and_the_file_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    now = 1_000_000_000 * 2_000_000_000
    store = SpanStore(path, max_bytes=2_000, max_file_bytes=1_000)
    for i in range(30):
        store.add([{**_span(f"t{i}", "a", now + i), "attributes": {"pad": "x" * 100}}])
    kept = [t["traceId"] for t in store.recent(limit=100)]
    assert kept and len(kept) < 30
    assert kept[0] == "t29" and "t0" not in kept
    assert store.trace("t29")[0]["attributes"] == {"pad": "x" * 100}
    # The file was rewritten from what is held: a new server reads back the same traces.
    assert [t["traceId"] for t in SpanStore(path).recent(limit=100)] == kept


def test_a_span_sent_again_is_held_once_and_a_trace_lives_as_long_as_its_newest_span(tmp_path: Path) -> None:
    store = SpanStore(None, max_age=60)
    now = int(time.time() * 1e9)
    old = now - 120 * 10**9
    store.add([_span("big", "late", now)])
    store.add([_span("big", f"s{i}", old) for i in range(500)])  # older than max_age, kept with their trace
    store.add([_span("big", "s7", old), _span("big", "s500", old)])  # one sent again, one new
    assert len(store.trace("big")) == 502
    assert [t["spans"] for t in store.recent()] == [502]
    alone = SpanStore(None, max_age=60)
    alone.add([_span("gone", f"s{i}", old) for i in range(3)])
    assert alone.trace("gone") == []
