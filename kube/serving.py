"""How long an HTTP server of ours waits for a client: idle keep-alive connections and request headers.

Idle connections: a client that reuses a pooled connection just as the server closes it sees
its request end in EOF, and a client may not retry a POST on its own (Go's transport will not;
kubectl's drain then fails an eviction). So the server must outlast every client's idle pool:
Go's transport drops idle connections after 90 s, httpx after 5 s; the server waits longer than
both, so the client always closes first and never races the server.

Request headers: uvicorn waits for a request's head forever, so a client that opens
connections and sends nothing, or sends its headers a byte at a time (slowloris), would hold
each connection as long as it liked. `HeaderTimeoutProtocol` closes a connection whose request
head is not complete `read_header_timeout` seconds after the connection was made or after the
request's first byte arrived, as Go's `http.Server.ReadHeaderTimeout` does (kube-apiserver sets
32 s). The wait between requests on a kept-alive connection is the idle timeout's, not this one,
so the timer never races a client reusing a pooled connection. The body and the handler are the
application's to bound (the API server's request timeout).
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["IDLE_TIMEOUT_SECONDS", "READ_HEADER_TIMEOUT_SECONDS", "HeaderTimeoutProtocol", "with_read_header_timeout"]

IDLE_TIMEOUT_SECONDS = 120
READ_HEADER_TIMEOUT_SECONDS = 32.0

P = TypeVar("P", bound="HeaderTimeoutProtocol")


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head takes longer than `read_header_timeout`."""

    read_header_timeout: float = READ_HEADER_TIMEOUT_SECONDS
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # the first byte of a request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()  # the head is complete (or the connection is done with)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.read_header_timeout, self._header_timed_out)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def with_read_header_timeout(protocol: type[P], seconds: float) -> type[P]:
    """`protocol` with another header timeout (uvicorn builds protocols from a class, so this makes one)."""
    return type(protocol.__name__, (protocol,), {"read_header_timeout": seconds})
