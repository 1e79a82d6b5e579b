"""The browser view: its static files (`/ui/`) and the one data route they need beyond the API.

The files under `/ui/` (apiserver/ui/: plain HTML, JavaScript and CSS, no build step) carry
no cluster data, so they are served to anyone, as the Kubernetes Dashboard serves its page:
the page asks for a bearer token, keeps it in the tab's sessionStorage and sends it as
`Authorization` on every data call. Those calls are ordinary authorized requests: the
overview reads `/api/v1/nodes`, `/api/v1/pods`, the Leases and `/readyz`; the timeline
reads `/debug/traces/recent` and this module's

- `GET /debug/traces/chain?object=Kind/namespace/name` (or `?traceID=T`): the chain of hops of
  the object's latest change (or of trace T) as `pkctl trace -o json` shows it (`kube.tracing.chain`),
  with `traceId` and the store `version`; with `&waitVersion=V` it answers once spans newer than
  V arrived (or after `timeoutSeconds`, default 20), so the page draws the chain as it grows and
  moves on to a newer change of the object without reloading.

Reading it takes `get` on the non-resource URL `/debug/traces/chain` (cluster-admin has it).
The static files are sent with a Content-Security-Policy that allows only same-origin scripts,
styles and fetches, so the page cannot be made to send its token anywhere else.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from apiserver.tracing import SpanStore
from kube.errors import NotFound
from kube.tracing.chain import chain

__all__ = ["ui_router"]

_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8"}
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"}


def _static(name: str) -> Response:
    """One file shipped in apiserver/ui/; NotFound for anything else (no paths, no other suffixes)."""
    suffix = name[name.rfind("."):] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in _TYPES:
        raise NotFound(f"no such file: {name}")
    file = resources.files("apiserver.ui").joinpath(name)
    if not file.is_file():
        raise NotFound(f"no such file: {name}")
    return Response(file.read_bytes(), media_type=_TYPES[suffix], headers=_HEADERS)


def ui_router(spans: SpanStore) -> APIRouter:
    router = APIRouter()

    @router.get("/ui")
    async def ui_root() -> Response:
        return RedirectResponse("/ui/", status_code=301)

    @router.get("/ui/")
    async def index() -> Response:
        return _static("index.html")

    @router.get("/ui/{name}")
    async def static(name: str) -> Response:
        return _static(name)

    @router.get("/debug/traces/chain")
    async def chain_of(request: Request) -> Response:
        q = request.query_params
        wait_version = q.get("waitVersion")
        if wait_version is not None and wait_version.lstrip("-").isdigit():
            timeout = min(float(q.get("timeoutSeconds") or 20), 60.0)
            await spans.wait_for_change(int(wait_version), timeout)
        version = spans.version()
        obj = q.get("object")
        trace_id = q.get("traceID") or (spans.latest_trace_of(obj) if obj else None)
        # A large trace (a 1000-replica Deployment) takes a while to lay out: not on the event loop.
        body = await asyncio.to_thread(_chain_body, spans, trace_id, obj, version)
        return Response(body, media_type="application/json")

    return router


def _chain_body(spans: SpanStore, trace_id: str | None, obj: str | None, version: int) -> bytes:
    view = chain(spans.trace(trace_id)) if trace_id else chain([])
    return json.dumps({**view, "object": obj, "traceID": trace_id, "version": version},
                      separators=(",", ":")).encode()
