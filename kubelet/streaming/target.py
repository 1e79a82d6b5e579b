"""The request a streaming endpoint serves and the container it reaches.

`StreamRequest` is one `/exec`, `/attach` or `/portForward` request as the kubelet's HTTP
server received it, before any response: its path parameters, query, headers (names in lower
case, values in order) and the raw request head, so a handler can either speak the protocol
itself or replay the request byte for byte to another server (the CRI streaming server).
`StreamTarget` is what a runtime resolved it to; `TargetError` says why it could not, as
the HTTP status and message to answer before upgrading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["StreamRequest", "StreamTarget", "TargetError", "StreamKind"]

StreamKind = Literal["exec", "attach", "portforward"]


@dataclass(frozen=True)
class StreamRequest:
    kind: StreamKind
    namespace: str
    pod: str
    container: str
    """"" for port-forward, which addresses the pod."""
    query: dict[str, list[str]]
    headers: dict[str, list[str]]
    head: bytes
    """The request line and headers as received, ending in the blank line."""

    def header(self, name: str) -> str:
        return ",".join(self.headers.get(name.lower(), []))

    @property
    def is_websocket(self) -> bool:
        """wsstream.IsWebSocketRequest: `Upgrade: websocket` and `Connection` naming upgrade."""
        return self.header("upgrade").lower() == "websocket" and "upgrade" in self.header("connection").lower()

    @property
    def command(self) -> list[str]:
        return list(self.query.get("command", []))


@dataclass(frozen=True)
class StreamTarget:
    namespace: str
    pod: str
    pod_uid: str
    container: str
    container_id: str
    sandbox_id: str


class TargetError(Exception):
    """The request cannot be served: answered with `status` and `message` before any upgrade."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message
