"""One tracer provider per process: a service name per component, spans batched to the API server.

Mirrors component-base/tracing (KEP-647): every component owns a provider with its service
name, and a batch span processor ships its spans off the hot path. picokube's own collector
is the API server (`/v1/traces`, OTLP/HTTP protobuf, authenticated like the API), reached with
the component's own client identity and TLS settings; `--otlp-endpoint` adds an external
OpenTelemetry collector beside it.

Guarantees: tracing never breaks the work it observes. An export that fails is logged at
DEBUG and dropped (the batch processor's queue is bounded, so a down collector costs memory
only up to that bound); setting up twice in one process keeps the first provider.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

if TYPE_CHECKING:  # kube.client imports kube.tracing: only the type is needed here
    from kube.client.config import ClientConfig

__all__ = ["OTLP_PATH", "ApiServerSpanExporter", "TracingConfig", "setup_tracing", "shutdown_tracing", "tracer"]

logger = logging.getLogger(__name__)

OTLP_PATH = "/v1/traces"
_INSTRUMENTATION = "picokube"


@dataclass(frozen=True)
class TracingConfig:
    """What a component's tracing flags ask for."""

    enabled: bool = True
    otlp_endpoint: str | None = None


class ApiServerSpanExporter(SpanExporter):
    """Posts spans as OTLP/HTTP protobuf to the API server's `/v1/traces` with the client's identity.

    Runs on the batch processor's thread, so it uses a synchronous client of its own.
    """

    def __init__(self, config: ClientConfig, *, timeout: float = 10.0) -> None:
        headers = {"Content-Type": "application/x-protobuf", "User-Agent": "picokube-tracing"}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        self._http = httpx.Client(base_url=config.server, headers=headers, verify=config.ssl_context(),
                                  timeout=timeout)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            resp = self._http.post(OTLP_PATH, content=encode_spans(spans).SerializeToString())
        except httpx.HTTPError as e:
            logger.debug("Exporting spans failed", extra={"spans": len(spans), "error": repr(e)})
            return SpanExportResult.FAILURE
        if resp.status_code >= 300:
            logger.debug("Exporting spans refused", extra={"spans": len(spans), "code": resp.status_code})
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._http.close()


def setup_tracing(service_name: str, *, config: TracingConfig, client: ClientConfig | None = None,
                  exporters: Sequence[SpanExporter] = ()) -> TracerProvider | None:
    """Install this process's tracer provider; spans go to the API server (`client`), `exporters`
    and `config.otlp_endpoint`. Returns None when tracing is off (spans are then no-ops)."""
    if not config.enabled:
        return None
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    targets: list[SpanExporter] = list(exporters)
    if client is not None:
        targets.append(ApiServerSpanExporter(client))
    if config.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        targets.append(OTLPSpanExporter(endpoint=config.otlp_endpoint.rstrip("/") + OTLP_PATH))
    for exporter in targets:
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    trace.set_tracer_provider(provider)
    return provider


def shutdown_tracing() -> None:
    """Flush what is queued and stop the exporters (a component calls this on its way out)."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.shutdown()


def tracer() -> trace.Tracer:
    """The tracer every picokube span is made with."""
    return trace.get_tracer(_INSTRUMENTATION)
