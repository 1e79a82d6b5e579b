"""The API server's small trace collector: OTLP/HTTP in, spans kept with bounded retention, queries out.

Every component exports its spans here (`POST /v1/traces`, protobuf
`ExportTraceServiceRequest`, authenticated and authorized like any request); the API
server's own spans arrive through `StoreSpanExporter` without a network hop or encoding. Spans are kept
in memory, indexed by trace and by the objects they name, and appended per received batch
(never per span) to a JSON-lines file in the data directory, so a restarted API server
still answers for recent traces. API servers that share the file read each other's batches
before answering a query (`_catch_up`), so traces stay whole behind a balancer; a live view
waiting for changes is woken only by batches its own server received.

Each span is held as its JSON encoding (with its ids and times beside it), not as decoded
dicts, which cost several times as much: a query decodes the spans it answers with.
Retention is bounded three ways: spans older than `max_age` seconds are dropped, and once
more than `max_spans` are held, or more than `max_bytes` of encoded spans, the oldest
traces go first; the file is rewritten from memory
when it grows past `max_file_bytes`. Not a general-purpose trace database: it answers
"everything in trace T" and "the latest trace that wrote object O", which is what
`pkctl trace` and the browser view ask.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from kube.tracing import attrs

__all__ = ["SpanStore", "StoreSpanExporter", "decode_export_request", "span_dict"]

logger = logging.getLogger(__name__)

Span = dict[str, Any]


class _Held:
    """One span as the store keeps it: what the indexes need, and the rest encoded."""

    __slots__ = ("data", "end", "span_id", "start")

    def __init__(self, span: Span) -> None:
        self.span_id: str = span.get("spanId") or ""
        self.start: int = span["start"]
        self.end: int = span["end"]
        self.data = json.dumps(span, separators=(",", ":")).encode()

    def span(self) -> Span:
        decoded: Span = json.loads(self.data)
        return decoded


class _Trace:
    """One trace's held spans, with their ids and newest end kept as they are added.

    A big rollout is one trace of thousands of spans: checking a span for a duplicate, or the
    trace for expiry, must not walk all of them.
    """

    __slots__ = ("ids", "newest", "spans")

    def __init__(self) -> None:
        self.spans: list[_Held] = []
        self.ids: set[str] = set()
        self.newest = 0

    def add(self, held: _Held) -> None:
        self.spans.append(held)
        if held.span_id:
            self.ids.add(held.span_id)
        self.newest = max(self.newest, held.end)


def _line(held: Sequence[_Held]) -> bytes:
    """Spans as one JSON array line, as the file holds each batch."""
    return b"[" + b",".join(h.data for h in held) + b"]\n"


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind) if kind else None


def decode_export_request(body: bytes) -> list[Span]:
    """The spans of an OTLP `ExportTraceServiceRequest` as plain dicts (ids in hex, times in unix ns).

    Raises `google.protobuf.message.DecodeError` on a malformed body.
    """
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    out: list[Span] = []
    for rs in req.resource_spans:
        resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
        service = str(resource.get("service.name", "unknown"))
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append({
                    "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(),
                    "parentSpanId": s.parent_span_id.hex() or None, "name": s.name, "service": service,
                    "start": s.start_time_unix_nano, "end": s.end_time_unix_nano,
                    "attributes": {kv.key: _value(kv.value) for kv in s.attributes},
                    "events": [{"name": e.name, "time": e.time_unix_nano,
                                "attributes": {kv.key: _value(kv.value) for kv in e.attributes}} for e in s.events],
                    "status": {"code": int(s.status.code), "message": s.status.message},
                })
    return out


class SpanStore:
    """Spans by trace, with the latest trace per object; safe to call from any thread."""

    def __init__(self, path: Path | None = None, *, max_age: float = 3600.0, max_spans: int = 200_000,
                 max_bytes: int = 32 << 20, max_file_bytes: int = 64 << 20) -> None:
        self.path, self.max_age, self.max_spans, self.max_file_bytes = path, max_age, max_spans, max_file_bytes
        self.max_bytes = max_bytes
        self._bytes = 0  # the encoded size of every held span
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._latest: dict[str, tuple[int, int, str]] = {}
        self._count = 0
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._version = 0
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._history: dict[str, dict[str, int]] = {}
        self._file_lock = threading.Lock()
        self._offset, self._inode = 0, 0  # how far the file has been read, and which file it was
        self._catch_up()

    def _catch_up(self) -> None:
        """Take in the batches appended to the file since it was last read.

        Several API servers (`picokube up --apiservers N`) share one file: each appends the
        batches it received and reads the others' before answering a query, so a trace
        whose spans were exported through a balancer to different servers is whole on each.
        Spans already held (our own batches, a file rewritten by a peer) are skipped by id.
        """
        if self.path is None:
            return
        with self._file_lock:
            try:
                st = self.path.stat()
                if st.st_ino != self._inode or st.st_size < self._offset:  # new, or rewritten by someone
                    self._offset, self._inode = 0, st.st_ino
                if st.st_size == self._offset:
                    return
                with self.path.open("rb") as f:
                    f.seek(self._offset)
                    data = f.read()
            except OSError:
                return
            end = data.rfind(b"\n")  # a line being appended right now is read next time
            if end < 0:
                return
            self._offset += end + 1
            spans: list[Span] = []
            for line in data[:end].splitlines():
                try:
                    spans.extend(json.loads(line))
                except ValueError:
                    logger.warning("Skipping an unreadable line of stored spans", extra={"path": str(self.path)})
        if spans:
            with self._lock:
                self._add_locked(spans)
                self._expire_locked()

    def add(self, spans: Sequence[Span]) -> None:
        """Keep `spans`, append them to the file as one line, and wake waiting queries."""
        if not spans:
            return
        now = time.time()
        with self._lock:
            added = self._add_locked(spans)
            self._expire_locked()
            for service in {s.get("service", "unknown") for s in spans}:
                self._seen[service] = now
            self._version += 1
            waiters = list(self._waiters)
        for loop, changed in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(changed.set)
        self._persist(added)

    def _add_locked(self, spans: Sequence[Span]) -> list[_Held]:
        """Index and keep the spans not held yet; those, encoded."""
        added = []
        for span in spans:
            tid = span["traceId"]
            trace = self._traces.get(tid)
            if trace is None:
                trace = self._traces[tid] = _Trace()
            if span.get("spanId") and span["spanId"] in trace.ids:
                continue
            added.append(_Held(span))
            trace.add(added[-1])
            self._traces.move_to_end(tid)
            self._count += 1
            self._bytes += len(added[-1].data)
            obj = span["attributes"].get(attrs.OBJECT)
            is_write = obj and span["attributes"].get(attrs.HOP) and span.get("service") == "apiserver"
            # A write that starts a trace (a person's change) names the object's latest change
            # over any later write a component made in an older trace.
            rank = (0 if span.get("parentSpanId") else 1, span["start"])
            if is_write and rank >= self._latest.get(obj, (0, 0, ""))[:2]:
                self._latest[obj] = (*rank, tid)
            if is_write:
                started = self._history.setdefault(obj, {})
                started[tid] = min(started.get(tid, span["start"]), span["start"])
        return added

    def _expire_locked(self) -> None:
        horizon = (time.time() - self.max_age) * 1e9
        while self._traces:
            tid, trace = next(iter(self._traces.items()))
            if self._count <= self.max_spans and self._bytes <= self.max_bytes and trace.newest >= horizon:
                break
            del self._traces[tid]
            self._count -= len(trace.spans)
            self._bytes -= sum(len(h.data) for h in trace.spans)
        if len(self._latest) > 2 * self.max_spans:
            self._latest = {o: v for o, v in self._latest.items() if v[2] in self._traces}
        if len(self._history) > 2 * self.max_spans:
            self._history = {o: kept for o, h in self._history.items()
                             if (kept := {t: v for t, v in h.items() if t in self._traces})}

    def _persist(self, held: Sequence[_Held]) -> None:
        """Append `held` as one line; past `max_file_bytes` first rewrite the file from memory.

        The store's own line counts as read when nobody appended before it, so a trace
        this store has since expired is not taken back in from the file.
        """
        if self.path is None or not held:
            return
        try:
            if self.path.exists() and self.path.stat().st_size > self.max_file_bytes:
                self._catch_up()  # what peers appended survives the rewrite
                self._rewrite()
            line = _line(held)
            with self._file_lock, self.path.open("ab") as f:
                st = os.fstat(f.fileno())
                caught_up = st.st_ino == self._inode and st.st_size == self._offset
                f.write(line)
                f.flush()
                if caught_up and os.fstat(f.fileno()).st_size == st.st_size + len(line):
                    self._offset += len(line)
        except OSError as e:
            logger.warning("Cannot store spans", extra={"path": str(self.path), "error": str(e)})

    def _rewrite(self) -> None:
        assert self.path is not None
        with self._lock:
            kept = [h for trace in self._traces.values() for h in trace.spans]
        data = _line(kept) if kept else b""
        tmp = self.path.with_suffix(".tmp")
        with self._file_lock:
            tmp.write_bytes(data)
            tmp.replace(self.path)
            self._inode, self._offset = self.path.stat().st_ino, len(data)

    def trace(self, trace_id: str) -> list[Span]:
        """Every span held for `trace_id`, oldest first (empty when unknown or expired)."""
        self._catch_up()
        with self._lock:
            trace = self._traces.get(trace_id)
            held = sorted(trace.spans if trace else (), key=lambda h: h.start)
        return [h.span() for h in held]

    def latest_trace_of(self, obj: str) -> str | None:
        """The trace of the latest change to `Kind/namespace/name`: the latest trace a person's write
        to it started, else the latest trace that wrote it."""
        self._catch_up()
        with self._lock:
            hit = self._latest.get(obj)
            return hit[2] if hit and hit[2] in self._traces else None

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """The newest traces: id, root span name and the object it wrote, span count, start."""
        self._catch_up()
        with self._lock:
            items = [(tid, list(trace.spans)) for tid, trace in list(self._traces.items())[-limit:]]
        out = []
        for tid, held in reversed(items):
            root = min(held, key=lambda h: h.start).span()
            out.append({"traceId": tid, "spans": len(held), "start": root["start"], "root": root["name"],
                        "object": root["attributes"].get(attrs.OBJECT)})
        return out

    def last_seen(self) -> dict[str, float]:
        """When each service's spans last arrived (unix seconds): what the collector knows of who is alive."""
        with self._lock:
            return dict(self._seen)

    def version(self) -> int:
        with self._lock:
            return self._version

    def traces_of(self, obj: str) -> list[dict[str, Any]]:
        """Every held trace that wrote `Kind/namespace/name`, oldest first: `{"traceId", "start"}`."""
        self._catch_up()
        with self._lock:
            held = [(start, tid) for tid, start in self._history.get(obj, {}).items() if tid in self._traces]
        return [{"traceId": tid, "start": start} for start, tid in sorted(held)]

    async def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait (without a thread) until a batch newer than `version` arrived or `timeout` passed."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(entry)
        try:
            if self.version() == version:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(entry[1].wait(), timeout)
        finally:
            with self._lock:
                self._waiters.discard(entry)
        return self.version()


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def span_dict(span: ReadableSpan) -> Span:
    """One of the SDK's finished spans in the shape `decode_export_request` gives (no protobuf round trip)."""
    ctx, parent = span.get_span_context(), span.parent
    assert ctx is not None
    return {
        "traceId": f"{ctx.trace_id:032x}", "spanId": f"{ctx.span_id:016x}",
        "parentSpanId": f"{parent.span_id:016x}" if parent is not None else None, "name": span.name,
        "service": str(span.resource.attributes.get("service.name", "unknown")),
        "start": span.start_time or 0, "end": span.end_time or 0,
        "attributes": {k: _plain(v) for k, v in (span.attributes or {}).items()},
        "events": [{"name": e.name, "time": e.timestamp,
                    "attributes": {k: _plain(v) for k, v in (e.attributes or {}).items()}} for e in span.events],
        "status": {"code": span.status.status_code.value, "message": span.status.description or ""},
    }


class StoreSpanExporter(SpanExporter):
    """Hands the API server's own spans to its store, in the same shape as received ones.

    The process's tracer provider is made before the server is assembled, so the store is
    attached later (`attach`); spans ended before that are dropped.
    """

    def __init__(self) -> None:
        self.store: SpanStore | None = None

    def attach(self, store: SpanStore) -> None:
        self.store = store

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.store is None:
            return SpanExportResult.SUCCESS
        try:
            self.store.add([span_dict(s) for s in spans])
        except Exception as e:  # noqa: BLE001 - tracing must never break the server
            logger.debug("Storing own spans failed", extra={"error": repr(e)})
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS
