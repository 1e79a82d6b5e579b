"""The trace collector's routes: OTLP/HTTP in (`POST /v1/traces`), queries out (`/debug/traces`).

Plain routes behind the same authentication and authorization as every request (non-resource
URLs: components are granted `post` on /v1/traces by the bootstrap policy; reading traces
takes a role that grants `get` on /debug/traces, cluster-admin has it).

- `POST /v1/traces`: an OTLP `ExportTraceServiceRequest` (application/x-protobuf); answers an
  empty `ExportTraceServiceResponse`, or 400 on a body that does not decode;
- `GET /debug/traces?traceID=T` or `?object=Kind/namespace/name`: `{"traceID", "spans", "version"}`,
  the spans of trace T (or of the latest trace that wrote the object), oldest first. With
  `&waitVersion=V` the answer waits (up to `timeoutSeconds`, default 20) until spans newer than
  store version V arrived, so a client can follow a trace as it grows;
- `GET /debug/traces/latest?object=Kind/namespace/name`: `{"traceID"}` of the object's latest
  change (the latest trace a person's write to it started, else the latest that wrote it);
- `GET /debug/traces/history?object=Kind/namespace/name`: `{"traces": [{"traceId", "start"}]}`,
  every held trace that wrote the object, oldest first (`pkctl trace --all`);
- `GET /debug/traces/recent`: the newest traces, one line each (with the object each started
  from), and `services`: when each component's spans last arrived (unix seconds).
"""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, Request
from fastapi.responses import Response
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from apiserver.tracing import SpanStore, decode_export_request
from kube.errors import BadRequest
from kube.tracing import OTLP_PATH

__all__ = ["traces_router"]


def _encode(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _json(body: object) -> Response:
    return Response(_encode(body), media_type="application/json")


def _ingest(spans: SpanStore, body: bytes) -> None:
    spans.add(decode_export_request(body))


def traces_router(spans: SpanStore) -> APIRouter:
    router = APIRouter()

    @router.post(OTLP_PATH)
    async def receive(request: Request) -> Response:
        body = await request.body()
        try:  # decoding and indexing a batch is CPU work: keep it off the event loop
            await asyncio.to_thread(_ingest, spans, body)
        except DecodeError as e:
            raise BadRequest(f"not an OTLP ExportTraceServiceRequest: {e}") from None
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf")

    @router.get("/debug/traces")
    async def query(request: Request) -> Response:
        q = request.query_params
        wait_version = q.get("waitVersion")
        if wait_version is not None and wait_version.lstrip("-").isdigit():
            timeout = min(float(q.get("timeoutSeconds") or 20), 60.0)
            await spans.wait_for_change(int(wait_version), timeout)
        version = spans.version()
        trace_id = q.get("traceID") or (spans.latest_trace_of(q["object"]) if q.get("object") else None)
        if not trace_id:
            return _json({"traceID": None, "spans": [], "version": version})
        answer = {"traceID": trace_id, "spans": spans.trace(trace_id), "version": version}
        body = await asyncio.to_thread(_encode, answer)
        return Response(body, media_type="application/json")

    @router.get("/debug/traces/latest")
    async def latest(request: Request) -> Response:
        return _json({"traceID": spans.latest_trace_of(request.query_params.get("object") or "")})

    @router.get("/debug/traces/history")
    async def history(request: Request) -> Response:
        return _json({"traces": spans.traces_of(request.query_params.get("object") or "")})

    @router.get("/debug/traces/recent")
    async def recent() -> Response:
        return _json({"traces": spans.recent(), "services": spans.last_seen(), "version": spans.version()})

    return router
