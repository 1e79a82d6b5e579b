"""Serving a watch: newline-delimited JSON events until timeoutSeconds or a disconnect.

Errors found before streaming (bad selectors) are plain error responses; an expired
resourceVersion, or one the store has not reached yet, is, as in Kubernetes, a 200 stream
with one ERROR event. Events from the
watch cache are written as their shared, once-encoded line unless the client asked for
Tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from starlette.responses import Response, StreamingResponse

from apiserver.endpoints.responses import go_json
from apiserver.endpoints.tables import Printer, to_table
from apiserver.registry.watch_event import WatchEvent, encode_event
from kube.errors import ApiError

__all__ = ["stream_watch", "error_stream", "line_encoder", "STREAMED_ERRORS"]

STREAMED_ERRORS = frozenset({410, 504})
"""Codes of failures upstream reports as an ERROR event in a 200 stream rather than as the answer."""


def _error_line(err: ApiError) -> bytes:
    return go_json({"type": "ERROR", "object": err.status})


def error_stream(err: ApiError) -> Response:
    return StreamingResponse(iter([_error_line(err)]), media_type="application/json")


def line_encoder(table_kind: str | None, include_object: str,
                 printer: Printer | None = None) -> Callable[[WatchEvent], bytes]:
    """How each event is written: its shared line, or (for Table watchers) a one-row Table."""
    def encode(event: WatchEvent) -> bytes:
        if not table_kind or event.type not in ("ADDED", "MODIFIED", "DELETED"):
            return event.line()
        obj = event.object
        table = to_table(table_kind, [obj], include_object=include_object, printer=printer,
                         list_meta={"resourceVersion": obj["metadata"].get("resourceVersion")})
        return encode_event(event.type, table)
    return encode


async def _stream(events: AsyncIterator[WatchEvent], timeout: int, encode: Callable[[WatchEvent], bytes],
                  watcher: str) -> AsyncIterator[bytes]:
    try:
        async with asyncio.timeout(timeout):
            async for event in events:
                yield encode(event)
                event.sent(watcher)  # the response resumes this generator once the chunk is written
    except TimeoutError:
        return
    except ApiError as e:
        yield _error_line(e)
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()


def stream_watch(events: AsyncIterator[WatchEvent], *, timeout: int,
                 encode: Callable[[WatchEvent], bytes], watcher: str = "") -> Response:
    """Stream `events`; `watcher` (the user) names this stream on the fan-out of traced writes."""
    return StreamingResponse(_stream(events, timeout, encode, watcher), media_type="application/json")
