"""build_app(config) -> the API server's ASGI application.

The API server's parts need a running event loop (etcd's gRPC channels are bound to it),
so the application assembles the `ApiServer` in the ASGI lifespan's startup and stops it at
shutdown; a request that arrives before startup finished is answered 503. Everything the
server does is in `apiserver.server` and the modules it assembles.
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.config import ApiServerConfig
from apiserver.pipeline import Receive, Scope, Send, send_status
from apiserver.server import ApiServer, assemble
from apiserver.storage.interface import Storage
from apiserver.tracing import StoreSpanExporter
from kube.errors import ServiceUnavailable

__all__ = ["build_app", "ApiServerApp"]


class ApiServerApp:
    """The ASGI entry point: lifespan assembles, starts and stops the server; HTTP goes to it."""

    def __init__(self, config: ApiServerConfig, *, storage: Storage | None = None,
                 admission_plugins: Iterable[object] = (), own_spans: StoreSpanExporter | None = None) -> None:
        self.config, self.storage_override, self.own_spans = config, storage, own_spans
        self.admission_plugins = list(admission_plugins)
        self.server: ApiServer | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if self.server is None:
            await send_status(send, ServiceUnavailable("the API server is starting"))
            return
        await self.server(scope, receive, send)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    server = await assemble(self.config, storage=self.storage_override,
                                            admission_plugins=self.admission_plugins, own_spans=self.own_spans)
                    await server.start()
                except Exception as e:  # noqa: BLE001 - startup failure: uvicorn exits non-zero
                    await send({"type": "lifespan.startup.failed", "message": repr(e)})
                    return
                self.server = server
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.server is not None:
                    await self.server.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def build_app(config: ApiServerConfig, *, storage: Storage | None = None,
              admission_plugins: Iterable[object] = (), own_spans: StoreSpanExporter | None = None) -> ApiServerApp:
    """The ASGI app; connects to etcd on startup unless a storage is handed in; `own_spans`, the
    exporter of this process's tracer provider, is attached to the server's span store."""
    return ApiServerApp(config, storage=storage, admission_plugins=admission_plugins, own_spans=own_spans)
