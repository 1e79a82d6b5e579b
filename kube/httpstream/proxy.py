"""Relaying one upgrade request to a backend: replay its head, read the status, relay the rest."""

from __future__ import annotations

from collections.abc import Iterable

from kube.httpstream.relay import relay
from kube.httpstream.stream import SocketStream

__all__ = ["BackendError", "send_head", "proxy_upgrade", "request_head", "HOP_BY_HOP"]

_MAX_STATUS_LINE = 8192

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade"})
"""Headers that describe one connection (RFC 9110 7.6.1); an upgrade keeps Connection and Upgrade."""


class BackendError(Exception):
    """The backend could not be reached or did not answer HTTP."""


def request_head(method: str, target: str, headers: Iterable[tuple[bytes, bytes]], *, host: str,
                 drop: frozenset[str] = frozenset()) -> bytes:
    """An HTTP/1.1 request head for `target` with `headers`, minus `drop` (lower-case names), Host set to `host`."""
    lines = [f"{method} {target} HTTP/1.1".encode(), b"Host: " + host.encode()]
    for name, value in headers:
        lowered = name.decode("latin-1").lower()
        if lowered == "host" or lowered in drop:
            continue
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _status(first: bytes) -> int:
    parts = first.split(b"\r\n", 1)[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise BackendError("the backend did not answer HTTP")
    return int(parts[1])


async def send_head(backend: SocketStream, head: bytes) -> tuple[int, bytes]:
    """Send `head` to `backend` and read up to its status line: (status, the bytes read so far).

    BackendError (with the backend closed) when it does not answer HTTP, so the caller can still
    answer its own client with an error before taking the client's connection.
    """
    try:
        await backend.send(head)
        first = b""
        while b"\r\n" not in first and len(first) < _MAX_STATUS_LINE:
            chunk = await backend.receive()
            if not chunk:
                break
            first += chunk
        return _status(first), first
    except (ConnectionError, OSError) as e:
        await backend.aclose()
        raise BackendError(f"the backend closed the connection: {e}") from None
    except BackendError:
        await backend.aclose()
        raise


async def proxy_upgrade(client: SocketStream, backend: SocketStream, first: bytes) -> None:
    """Relay both ways until done, starting with `first` (what `send_head` read) towards the client.

    Whatever the backend answered (the 101 and the protocol, or an error response) reaches the
    client unchanged. Both connections are closed on return.
    """
    await relay(client, backend, b_to_a_first=first)
