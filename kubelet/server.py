"""The kubelet's HTTPS server: `/healthz`, `/containerLogs` (pods/log) and the streaming endpoints.

Mirrors kubelet/server/server.go for the one call picokube's API server makes:
`GET /containerLogs/{namespace}/{pod}/{container}` with `follow`, `tailLines`, `timestamps`,
`previous`, `sinceSeconds` and `limitBytes`, answering text/plain (404 with a message for an
unknown pod or container). When a client CA is configured, clients must present a
certificate it signed (the API server's kubelet-client certificate), as upstream's
`--client-ca-file` demands. The socket is bound before the Node registers, so the Node
publishes the real port in `status.daemonEndpoints.kubeletEndpoint.Port`.
`/exec`, `/attach` and `/portForward` (pods/exec, pods/attach, pods/portforward) are HTTP
upgrades, taken off the connection before the app and served by the `streaming` handler
(see `kubelet.streaming`); without one they are 404 like any unknown path.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator, Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from kube.serving import IDLE_TIMEOUT_SECONDS
from kube.timeutil import format_rfc3339_nano, utc_now
from kubelet.logs import ContainerLogSource, LogNotFound
from kubelet.streaming import StreamingHandler, streaming_http_protocol

__all__ = ["KubeletServer"]

_FOLLOW_POLL = 0.25


def _line(text: str, when: float, timestamps: bool) -> bytes:
    if timestamps:
        return f"{format_rfc3339_nano(when)} {text}\n".encode()
    return f"{text}\n".encode()


class KubeletServer:
    """Serves one node's endpoints; `bind()` first (to learn the port), then `serve()`."""

    def __init__(self, logs: ContainerLogSource, *, address: str, port: int, cert_file: str | None,
                 key_file: str | None, client_ca_file: str | None, healthy: Callable[[], bool] = lambda: True,
                 streaming: StreamingHandler | None = None) -> None:
        """With `streaming`, /exec, /attach and /portForward are served by it (see kubelet.streaming)."""
        self.logs = logs
        self.streaming = streaming
        self.address, self.port = address, port
        self.cert_file, self.key_file, self.client_ca_file = cert_file, key_file, client_ca_file
        self.healthy = healthy
        self._sock: socket.socket | None = None
        self._server: uvicorn.Server | None = None

    def bind(self) -> int:
        sock = socket.socket(socket.AF_INET6 if ":" in self.address else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.address, self.port))
        sock.listen(128)
        sock.setblocking(False)
        self._sock = sock
        self.port = int(sock.getsockname()[1])
        return self.port

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/healthz", self.healthz),
                                 Route("/containerLogs/{namespace}/{pod}/{container}", self.container_logs)])

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok" if self.healthy() else "not ready", status_code=200 if self.healthy() else 500)

    async def container_logs(self, request: Request) -> Response:
        ns, pod, container = (request.path_params[k] for k in ("namespace", "pod", "container"))
        q = request.query_params
        try:
            tail = int(q["tailLines"]) if "tailLines" in q else None
            since = int(q["sinceSeconds"]) if "sinceSeconds" in q else None
            limit = int(q["limitBytes"]) if "limitBytes" in q else None
        except ValueError:
            return PlainTextResponse("tailLines, sinceSeconds and limitBytes must be integers", status_code=400)
        follow = q.get("follow") in ("true", "1")
        timestamps = q.get("timestamps") in ("true", "1")
        previous = q.get("previous") in ("true", "1")
        try:
            lines, container_id = await self.logs.read(ns, pod, container, previous=previous)
        except LogNotFound as e:
            return PlainTextResponse(str(e), status_code=404)
        seen = len(lines)
        if since is not None:
            cutoff = utc_now().timestamp() - since
            lines = [ln for ln in lines if ln.time >= cutoff]
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []

        async def body() -> AsyncIterator[bytes]:
            nonlocal seen
            sent_bytes = 0
            for ln in lines:
                chunk = _line(ln.text, ln.time, timestamps)
                if limit is not None and sent_bytes + len(chunk) > limit:
                    yield chunk[: limit - sent_bytes]
                    return
                sent_bytes += len(chunk)
                yield chunk
            while follow and not previous:
                await asyncio.sleep(_FOLLOW_POLL)
                try:
                    now_lines, cid = await self.logs.read(ns, pod, container, previous=False)
                except LogNotFound:
                    return
                if cid != container_id:
                    return  # the container was restarted: upstream's follow ends too
                for ln in now_lines[seen:]:
                    yield _line(ln.text, ln.time, timestamps)
                seen = len(now_lines)
                if not await self.logs.running(ns, pod, container):
                    return

        return StreamingResponse(body(), media_type="text/plain")

    async def serve(self) -> None:
        """Serve until cancelled; the caller's signal handling is left alone."""
        if self._sock is None:
            self.bind()
        kwargs: dict[str, object] = {}
        if self.cert_file and self.key_file:
            kwargs.update(ssl_certfile=self.cert_file, ssl_keyfile=self.key_file)
            if self.client_ca_file:
                kwargs.update(ssl_ca_certs=self.client_ca_file, ssl_cert_reqs=ssl.CERT_REQUIRED)
        if self.streaming is not None:
            kwargs.update(http=streaming_http_protocol(self.streaming), ws="none")
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1, timeout_keep_alive=IDLE_TIMEOUT_SECONDS,
                                **kwargs)  # type: ignore[arg-type]
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)  # what serve() sets up, minus its signal capture
        self._server = server
        await server.startup(sockets=[self._sock])  # type: ignore[list-item]
        try:
            await asyncio.Event().wait()
        finally:
            server.should_exit = True
            await asyncio.shield(server.shutdown())
