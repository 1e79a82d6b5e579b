"""How long an HTTP server of ours keeps an idle keep-alive connection open.

A client that reuses a pooled connection just as the server closes it sees its request end
in EOF, and a client may not retry a POST on its own (Go's transport will not; kubectl's
drain then fails an eviction). So the server must outlast every client's idle pool: Go's
transport drops idle connections after 90 s, httpx after 5 s; the server waits longer than
both, so the client always closes first and never races the server.
"""

from __future__ import annotations

__all__ = ["IDLE_TIMEOUT_SECONDS"]

IDLE_TIMEOUT_SECONDS = 120
