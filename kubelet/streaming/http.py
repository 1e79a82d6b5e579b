"""Taking streaming requests off the kubelet's HTTP server, before any response is written.

exec, attach and port-forward are HTTP upgrades (to WebSocket or to SPDY/3.1), and SPDY is
not something an ASGI server can hand to an app. So the kubelet serves HTTP with uvicorn's h11
protocol, subclassed here: a request whose path is `/exec/...`, `/attach/...` or
`/portForward/...` is not given to the ASGI app; the connection is taken over instead (as
uvicorn itself does for a WebSocket upgrade) and handed, with its parsed `StreamRequest` and
any bytes already read past the request head, to the `StreamingHandler`. The handler then owns
the socket: it answers (an error, or 101 and the protocol) and closes it. Every other path goes
to the app as before. The handler's task is tracked with uvicorn's own, so shutdown waits for
(then cancels) it. Paths follow upstream's kubelet, with or without the pod UID segment:
`/exec/{namespace}/{pod}[/{uid}]/{container}`, `/portForward/{namespace}/{pod}[/{uid}]`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import parse_qs, unquote

from uvicorn.protocols.http.h11_impl import H11Protocol

from kubelet.streaming.target import StreamKind, StreamRequest
from kubelet.streaming.transport import SocketStream

__all__ = ["streaming_http_protocol", "parse_stream_path"]

logger = logging.getLogger(__name__)

_KINDS: dict[str, StreamKind] = {"exec": "exec", "attach": "attach", "portForward": "portforward"}


def parse_stream_path(path: str) -> tuple[StreamKind, str, str, str] | None:
    """(kind, namespace, pod, container) for a streaming path; None for any other path."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    kind = _KINDS.get(parts[0]) if parts else None
    if kind is None:
        return None
    rest = parts[1:]
    if kind == "portforward" and len(rest) in (2, 3) and all(rest):
        return kind, rest[0], rest[1], ""
    if kind != "portforward" and len(rest) in (3, 4) and all(rest):
        return kind, rest[0], rest[1], rest[-1]
    return None


def streaming_http_protocol(handler: Any) -> type[H11Protocol]:
    """An h11 protocol class that hands streaming requests to `handler` (a StreamingHandler)."""

    class StreamingH11Protocol(H11Protocol):
        def _should_upgrade(self) -> bool:
            if parse_stream_path(self.scope["path"]) is not None:
                return True
            return bool(super()._should_upgrade())

        def handle_websocket_upgrade(self, event: Any) -> None:
            parsed = parse_stream_path(self.scope["path"])
            if parsed is None:
                super().handle_websocket_upgrade(event)
                return
            kind, namespace, pod, container = parsed
            headers: dict[str, list[str]] = {}
            for name, value in self.headers:
                headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
            head = b"".join([event.method, b" ", event.target, b" HTTP/1.1\r\n",
                             *(n + b": " + v + b"\r\n" for n, v in self.headers), b"\r\n"])
            query = parse_qs(self.scope["query_string"].decode("latin-1"), keep_blank_values=True)
            request = StreamRequest(kind, namespace, pod, container, query, headers, head)
            trailing, _ = self.conn.trailing_data
            self.connections.discard(self)
            self._unset_keepalive_if_required()
            reader = asyncio.StreamReader()
            protocol = asyncio.StreamReaderProtocol(reader)
            self.transport.set_protocol(protocol)
            protocol.connection_made(self.transport)
            if trailing:
                reader.feed_data(bytes(trailing))
            writer = asyncio.StreamWriter(self.transport, protocol, reader, self.loop)
            task = self.loop.create_task(_serve(handler, request, SocketStream(reader, writer)))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    return StreamingH11Protocol


async def _serve(handler: Any, request: StreamRequest, stream: SocketStream) -> None:
    try:
        await handler(request, stream)
    except Exception as e:  # noqa: BLE001 - a connection boundary: log it, drop only this connection
        logger.warning("Streaming request failed", extra={"verb": request.kind, "pod": f"{request.namespace}/"
                                                          f"{request.pod}", "error": repr(e)})
    finally:
        await stream.aclose()
