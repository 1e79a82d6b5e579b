"""The one watch-event type every watch stream yields, carrying its encoded line.

Mirrors apimachinery's watch.Event. An event that comes from the watch cache shares its
JSON line with every other watcher that receives the same event with the same type (a
`SharedEncoding`), so one change is serialized once however many clients watch; any other
event (a bookmark, an initial ADDED, an event straight from etcd) encodes itself on first
use. The shared lines live as long as some queued event still needs them, not as long as
the change stays in the cache's window.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apiserver.registry.watch_fanout import FanOut

__all__ = ["SharedEncoding", "WatchEvent", "encode_event"]

Obj = dict[str, Any]


def encode_event(type_: str, obj: Obj) -> bytes:
    """`{"type": ..., "object": ...}` as one newline-terminated JSON line."""
    return (json.dumps({"type": type_, "object": obj}, separators=(",", ":")) + "\n").encode()


class SharedEncoding:
    """One change's NDJSON lines, one per event type, shared by the watchers it is sent to.

    `fanout` is the change's traced fan-out, when it was a traced write.
    """

    __slots__ = ("_lines", "fanout")

    def __init__(self, fanout: FanOut | None) -> None:
        self.fanout = fanout
        self._lines: dict[str, bytes] = {}

    def line(self, type_: str, obj: Obj) -> bytes:
        cached = self._lines.get(type_)
        if cached is None:
            cached = self._lines[type_] = encode_event(type_, obj)
        return cached


class WatchEvent:
    """ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, with its object."""

    __slots__ = ("_line", "_shared", "object", "type")

    def __init__(self, type_: str, obj: Obj, shared: SharedEncoding | None = None) -> None:
        self.type, self.object, self._shared = type_, obj, shared
        self._line: bytes | None = None

    def line(self) -> bytes:
        """The event as one NDJSON line; shared with other watchers when it came from the cache."""
        if self._shared is not None:
            return self._shared.line(self.type, self.object)
        if self._line is None:
            self._line = encode_event(self.type, self.object)
        return self._line

    def sent(self, watcher: str) -> None:
        """The stream of `watcher` (a user name) wrote this event: recorded on a traced write's fan-out."""
        if self._shared is not None and self._shared.fanout is not None:
            self._shared.fanout.sent(watcher)

    def __repr__(self) -> str:
        return f"WatchEvent({self.type!r}, {self.object.get('metadata', {}).get('name')!r})"
