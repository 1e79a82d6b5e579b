"""The proxy's HTTP server: kube-proxy's health and metrics endpoints, and its report.

- `GET /healthz` (and `/livez`): 200 while syncs keep up, 503 once a change has waited more
  than two sync periods; the body is kube-proxy's JSON
  `{"lastUpdated": ..., "currentTime": ..., "nodeEligible": true}`;
- `GET /metrics`: Prometheus text (`proxy.metrics`);
- `GET /proxyMode`: `iptables` or `simulated`, as kube-proxy's metrics server answers;
- `GET /status`: what the proxy programmed (or, simulated, would program), see `proxy.status`.

kube-proxy serves health on 10256 and metrics on 10249; one server on the health address
serves both here, since several proxies of one host (`picokube up`) each need their own
port. Plain HTTP, as upstream's. `bind()` first (to learn the port), then `serve()`.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from kube.metrics import CONTENT_TYPE, render_bytes
from kube.serving import IDLE_TIMEOUT_SECONDS
from kube.timeutil import format_rfc3339_nano, utc_now
from proxy.metrics import ProxyMetrics

__all__ = ["ProxyServer"]

logger = logging.getLogger(__name__)


class ProxyServer:
    def __init__(self, *, address: str, port: int, mode: str, metrics: ProxyMetrics,
                 status: Callable[[], dict[str, Any]]) -> None:
        self.address, self.port = address, port
        self.mode, self.metrics, self.status = mode, metrics, status
        self._sock: socket.socket | None = None

    def bind(self) -> int:
        sock = socket.socket(socket.AF_INET6 if ":" in self.address else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.address, self.port))
        sock.listen(64)
        sock.setblocking(False)
        self._sock = sock
        self.port = int(sock.getsockname()[1])
        return self.port

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/healthz", self.healthz), Route("/livez", self.healthz),
                                 Route("/metrics", self.metrics_text), Route("/proxyMode", self.proxy_mode),
                                 Route("/status", self.status_json)])

    async def healthz(self, request: Request) -> Response:
        doc = self.status()
        body = {"lastUpdated": doc.get("lastSync") or "", "currentTime": format_rfc3339_nano(utc_now()),
                "nodeEligible": True}
        return JSONResponse(body, status_code=200 if doc.get("healthy") else 503)

    async def metrics_text(self, request: Request) -> Response:
        return Response(render_bytes(self.metrics.registry), media_type=CONTENT_TYPE)

    async def proxy_mode(self, request: Request) -> Response:
        return PlainTextResponse(self.mode)

    async def status_json(self, request: Request) -> Response:
        return JSONResponse(self.status())

    async def serve(self) -> None:
        """Serve until cancelled; the caller's signal handling is left alone."""
        if self._sock is None:
            self.bind()
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1, timeout_keep_alive=IDLE_TIMEOUT_SECONDS)
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)
        await server.startup(sockets=[self._sock])  # type: ignore[list-item]
        logger.info("Serving health and metrics", extra={"address": f"{self.address}:{self.port}"})
        try:
            await asyncio.Event().wait()
        finally:
            server.should_exit = True
            await asyncio.shield(server.shutdown())
