"""Encoding answers: JSON bodies, `metav1.Status` for errors, and the Warning header."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from starlette.responses import Response

from kube.errors import ApiError

__all__ = ["json_response", "status_response"]


def _header_text(text: str) -> str:
    """`text` without control characters, which no header value may carry (a field name may hold them)."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


def json_response(body: Any, status_code: int = 200, *, warnings: list[str] | None = None) -> Response:
    # Header values travel as bytes; field names may be any Unicode, so send their UTF-8 as is.
    headers = {"Warning": ", ".join(f'299 - "{_header_text(w)}"' for w in warnings).encode().decode("latin-1")} \
        if warnings else None
    return Response(json.dumps(body, separators=(",", ":")), status_code=status_code, media_type="application/json",
                    headers=headers)


def status_response(err: ApiError) -> Response:
    """The Status body kube-apiserver sends for `err`, with its code."""
    return json_response(err.status, err.code)
