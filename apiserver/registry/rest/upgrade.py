"""Answering a request by relaying it to a backend: upgrades byte for byte, plain HTTP by streaming.

The two ways every connect subresource that reaches past the API server (exec, attach,
port-forward, the proxies) hands a request on, as apimachinery's UpgradeAwareHandler does:
- `upgrade_to(request, backend, target)`: the request asked to upgrade; its head is replayed to
  `backend` with the request-target rewritten, and once the backend has answered (so an
  unreachable or silent backend still gets the client a 503 Status), the client's connection
  is taken and relayed both ways until either side closes. The backend's answer, 101 or an
  error, reaches the client unchanged.
- `forward_http(request, client, url)`: a plain request is sent to `url` with its body
  streamed, and the answer streamed back, minus hop-by-hop headers.
The client's credentials (Authorization, Impersonate-*) never leave the API server.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from kube.errors import ServiceUnavailable
from kube.httpstream import (
    HOP_BY_HOP,
    BackendError,
    SocketStream,
    proxy_upgrade,
    request_head,
    send_head,
    take_connection,
)

__all__ = ["UpgradeRelay", "upgrade_to", "forward_http", "CREDENTIAL_HEADERS", "ProxyTransport"]

CREDENTIAL_HEADERS = frozenset({"authorization"})


class ProxyTransport:
    """How the API server reaches pods and Service endpoints: HTTP, or HTTPS without verification, as upstream."""

    def __init__(self) -> None:
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE
        self.tls = insecure
        self.http = httpx.AsyncClient(verify=insecure, timeout=httpx.Timeout(10.0, read=None))

    async def close(self) -> None:
        await self.http.aclose()


def _forwarded(name: str) -> bool:
    lowered = name.lower()
    return lowered not in CREDENTIAL_HEADERS and not lowered.startswith("impersonate-")


class UpgradeRelay(Response):
    """The response of a relayed upgrade: takes the client's connection and relays it to the backend."""

    def __init__(self, backend: SocketStream, first: bytes, code: int) -> None:
        super().__init__(status_code=code)
        self.backend, self.first = backend, first

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        client = take_connection(scope)
        # Not written (the backend's own answer is relayed); the server's metrics and audit see the code.
        await send({"type": "http.response.start", "status": self.status_code, "headers": []})
        await proxy_upgrade(client, self.backend, self.first)


async def upgrade_to(request: Request, backend: SocketStream, target: str, *, host: str) -> UpgradeRelay:
    """Replay `request`'s upgrade to `backend` at `target` (path and query); 503 if the backend will not answer."""
    headers = [(n, v) for n, v in request.scope["headers"] if _forwarded(n.decode("latin-1"))]
    head = request_head(request.method, target, headers, host=host)
    try:
        code, first = await send_head(backend, head)
    except BackendError as e:
        raise ServiceUnavailable(f"error trying to reach the backend: {e}") from None
    return UpgradeRelay(backend, first, code)


async def forward_http(request: Request, client: httpx.AsyncClient, url: str) -> Response:
    """Send `request` on to `url` and stream the answer back; ServiceUnavailable if it cannot be reached."""
    headers = [(n, v) for n, v in request.headers.raw
               if _forwarded(n.decode("latin-1")) and n.decode("latin-1").lower() not in HOP_BY_HOP
               and n.lower() != b"host"]
    body = request.stream() if request.method not in ("GET", "HEAD", "OPTIONS") else None
    outgoing = client.build_request(request.method, url, headers=headers, content=body)
    try:
        resp = await client.send(outgoing, stream=True)
    except httpx.HTTPError as e:
        raise ServiceUnavailable(f"error trying to reach service: {e}") from None

    async def stream() -> AsyncIterator[bytes]:
        try:
            async for chunk in resp.aiter_raw():
                yield chunk
        finally:
            await resp.aclose()

    answer = {k: v for k, v in resp.headers.multi_items() if k.lower() not in HOP_BY_HOP}
    return StreamingResponse(stream(), status_code=resp.status_code, headers=answer)
