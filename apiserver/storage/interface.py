"""The storage contract of the API server: a revisioned key-value store with watches.

Everything above this layer (registries, the watch cache, HTTP handlers) speaks only this
interface, so the backend can be swapped (etcd today, a fake in unit tests) without touching
them. The shapes mirror etcd's MVCC model, because that is what Kubernetes semantics are
built on:

* every write bumps one global, monotonically increasing store *revision*; a key's
  `mod_revision` is the revision of its last write and becomes the object's
  resourceVersion, `create_revision` the revision that created it;
* `list` reads a consistent snapshot at one revision, optionally an old one, optionally
  in pages (`limit` + `start_key`) that all read the same snapshot;
* `watch` streams every change after a revision, in revision order, exactly once, so
  "list at R, then watch after R" never misses or repeats an event.

Invariants every implementation keeps:

* values are opaque bytes; keys are `str` and `list`/`watch` select by string prefix;
* returned revisions are store revisions: a write returns the revision it produced;
* failures are reported only through `apiserver.storage.errors` exceptions, never through
  backend client types.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["KeyValue", "ListResult", "WatchEvent", "WatchEventType", "Storage"]

logger = logging.getLogger(__name__)

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "PROGRESS"]


@dataclass(frozen=True)
class KeyValue:
    """One stored key as read at some revision."""

    key: str
    value: bytes
    mod_revision: int
    create_revision: int
    stale: bool = False
    """The value was read through an old encryption key (or unencrypted where encryption is on):
    an update should write it back even when nothing changed, so a rewrite rotates the key."""


@dataclass(frozen=True)
class ListResult:
    """The keys under a prefix, read at a single revision."""

    items: list[KeyValue]
    """Sorted by key."""
    revision: int
    """The store revision the list was read at."""
    more: bool
    """True when `limit` cut the result; continue from the key after the last item."""
    count: int = 0
    """How many keys the range read holds (from `start_key` to the end of the prefix) at that
    revision: len(items) unless `limit` cut it, so `count - len(items)` keys remain."""


@dataclass(frozen=True)
class WatchEvent:
    """One change seen by a watch, or a progress notification (type PROGRESS).

    * ADDED: the key was created by this event (create_revision == mod_revision).
    * MODIFIED: an existing key got a new value; `prev_value` is the old one when known.
    * DELETED: `value` and `prev_value` are both the last value before the delete (None when
      etcd no longer has it); `revision` is the revision of the delete itself.
    * PROGRESS: no change; `key` is "" and `revision` is a store revision such that every
      later event on this watch has a greater revision (a bookmark).
    """

    type: WatchEventType
    key: str
    value: bytes | None
    prev_value: bytes | None
    revision: int


@runtime_checkable
class Storage(Protocol):
    """A revisioned key-value store (see the module docstring for the semantics)."""

    async def create(self, key: str, value: bytes) -> int:
        """Create `key`; return the new revision. Raises KeyExists."""
        ...

    async def get(self, key: str) -> KeyValue:
        """Read `key` at the latest revision. Raises KeyNotFound."""
        ...

    async def list(self, prefix: str, *, revision: int = 0, limit: int = 0,
                   start_key: str | None = None) -> ListResult:
        """Keys under `prefix`, sorted; `revision` 0 = latest, `limit` 0 = all.

        `start_key` continues a paged list from that key (inclusive; it must lie within
        `prefix`). Raises Compacted when `revision` was compacted away.
        """
        ...

    async def count(self, prefix: str) -> int:
        """How many keys are under `prefix` at the latest revision."""
        ...

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> int:
        """Compare-and-swap on mod_revision; return the new revision.

        Raises KeyNotFound when the key is missing and RevisionConflict (carrying the current
        KeyValue) when its mod_revision is not `expected_revision`.
        """
        ...

    async def guaranteed_update(self, key: str, try_update: Callable[[KeyValue], Awaitable[bytes | None]],
                                *, max_retries: int = 16) -> KeyValue:
        """Read-modify-write `key` until the write wins; return the KeyValue as written.

        `try_update(current)` returns the new bytes, or None for "no change" (then the current
        KeyValue is returned and nothing is written). On a conflict the current value is
        re-read and `try_update` called again, up to `max_retries` times. Exceptions from
        `try_update` propagate unchanged. Raises KeyNotFound.
        """
        ...

    async def delete(self, key: str, *, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        """Delete `key`; return (the deleted KeyValue, revision of the delete).

        Raises KeyNotFound, and RevisionConflict when `expected_revision` is given and differs.
        """
        ...

    def watch(self, prefix: str, *, after_revision: int) -> AsyncIterator[WatchEvent]:
        """Every change under `prefix` with revision > `after_revision`, in order, once each.

        Raises Compacted (on the first iteration) when `after_revision + 1` is no longer
        available. Backend connection failures are retried transparently; closing the
        iterator releases everything it holds.
        """
        ...

    async def current_revision(self) -> int:
        """The latest store revision."""
        ...

    async def compact(self, revision: int) -> None:
        """Discard history older than `revision` (a no-op if already compacted that far)."""
        ...

    async def healthy(self) -> bool:
        """A cheap round trip with a short timeout; False when unreachable. Never raises."""
        ...

    async def close(self) -> None:
        """Release the connection; open watches end."""
        ...
