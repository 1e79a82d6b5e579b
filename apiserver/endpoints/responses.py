"""Encoding answers: JSON or protobuf bodies, `metav1.Status` for errors, and the Warning header.

JSON bodies are written as kube-apiserver's Go encoder writes them, byte for byte: compact,
UTF-8 as is, `<`, `>`, `&`, U+2028 and U+2029 escaped, and a trailing newline. Clients that
compare bodies (the official Python client's suites do, for Status) see what upstream sends.
Every error path (the pipeline, the plain routes, watch ERROR events) takes its Status from
`ApiError.status` and its bytes from here. An object goes out as Kubernetes protobuf when the
client's Accept header prefers `application/vnd.kubernetes.protobuf` (client-go's typed
clients list it first, JSON after) and its kind has a message; otherwise, and always for
errors, as JSON.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from typing import Any

from starlette.responses import Response

from apiserver.protobuf import codec
from kube.errors import ApiError

__all__ = ["go_json", "json_response", "object_response", "prefers_protobuf", "status_body", "status_response"]

logger = logging.getLogger(__name__)

_GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_json(body: Any) -> bytes:
    """`body` as Go's `json.Encoder` writes it (HTML-safe escapes, trailing newline)."""
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in _GO_ESCAPES:
        if raw in text:  # these characters can only occur inside strings
            text = text.replace(raw, escaped)
    return (text + "\n").encode()


def status_body(err: ApiError) -> bytes:
    """The bytes of the Status kube-apiserver sends for `err`."""
    return go_json(err.status)


def _header_text(text: str) -> str:
    """`text` without control characters, which no header value may carry (a field name may hold them)."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


def _warning_headers(warnings: list[str] | None) -> dict[str, str] | None:
    # Header values travel as bytes; field names may be any Unicode, so send their UTF-8 as is.
    return {"Warning": ", ".join(f'299 - "{_header_text(w)}"' for w in warnings).encode().decode("latin-1")} \
        if warnings else None


def json_response(body: Any, status_code: int = 200, *, warnings: list[str] | None = None) -> Response:
    return Response(go_json(body), status_code=status_code, media_type="application/json",
                    headers=_warning_headers(warnings))


def prefers_protobuf(accept: str) -> bool:
    """True when protobuf comes before any JSON (or wildcard) media type in `accept`."""
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media == codec.MEDIA_TYPE:
            return True
        if media in ("application/json", "*/*", "application/*") or media.endswith("+json"):
            return False
    return False


def object_response(accept: str, body: dict[str, Any], status_code: int = 200, *,
                    warnings: list[str] | None = None) -> Response:
    """`body` (an object or list with apiVersion and kind) in the encoding the client prefers."""
    if prefers_protobuf(accept):
        try:
            encoded = codec.encode_object(body)
        except codec.ProtobufError:
            logger.warning("Answering in JSON, the object does not fit its protobuf message",
                           extra={"kind": body.get("kind")}, exc_info=True)
            encoded = None
        if encoded is not None:
            return Response(encoded, status_code=status_code, media_type=codec.MEDIA_TYPE,
                            headers=_warning_headers(warnings))
    return json_response(body, status_code, warnings=warnings)


def status_response(err: ApiError) -> Response:
    """The Status body kube-apiserver sends for `err`, with its code."""
    return Response(status_body(err), status_code=err.code, media_type="application/json")
