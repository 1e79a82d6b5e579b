"""The deadline of a request that is not long-running: `--request-timeout`, or a shorter `?timeout=`.

Mirrors kube-apiserver's `WithRequestDeadline` and `WithTimeoutForNonLongRunningRequests`. A
request gets `--request-timeout` (default 1m0s) unless its `timeout` query parameter (a Go
duration) asks for less; `timeout=0s` or more than the server's maximum means the maximum, and a
malformed one is a 400. The deadline covers the whole request: authentication, reading the body
(a client that trickles its body cannot hold a seat past it), the handler and writing the
response. When it passes before the response began, the request is cancelled (as upstream
cancels the request's context) and answered 504 with upstream's Status ("Timeout: request did
not complete within the allotted timeout"); when the response had begun, the connection is
aborted, as upstream's `http.ErrAbortHandler` does, since nothing else can tell the client.
Long-running requests (`longrunning`) have no such deadline.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from kube.duration import parse_go_duration
from kube.errors import BadRequest, Timeout

__all__ = ["request_deadline", "timed_out"]

_INVALID = "invalid timeout specified in the request URL"


def request_deadline(query_string: bytes, maximum: float) -> float:
    """Seconds the request may take: `maximum`, or less when `?timeout=` asks; BadRequest if malformed."""
    values = parse_qs(query_string.decode("latin-1")).get("timeout")
    if not values or not values[0]:
        return maximum
    try:
        asked = parse_go_duration(values[0])
    except ValueError as e:
        raise BadRequest(f"{_INVALID} - {e}") from None
    return asked if 0 < asked < maximum else maximum


def timed_out() -> Timeout:
    """The 504 of a request that outran its deadline, in upstream's words."""
    return Timeout("Timeout: request did not complete within the allotted timeout", details={"retryAfterSeconds": 0})
