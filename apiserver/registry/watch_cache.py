"""The watch cache: one etcd watch per resource feeding every HTTP watcher from memory.

Mirrors kube-apiserver's Cacher / watchCache. For one resource it keeps
- the current objects (so lists at resourceVersion=0 are answered without etcd), and
- a bounded window of recent events. A change is serialized to its JSON line once and
  shared by every watcher it is dispatched to (per event type, since a selector transition
  turns a MODIFIED into an ADDED or DELETED for some watchers); the line is not kept in
  the window.
The window keeps each past version as the bytes etcd stored, not decoded: a decoded object
costs several times its JSON, and the window holds many superseded versions of each
object. An event is decoded while it is dispatched live and again only when a watch
resumes from inside the window. The window is bounded both in events (`window`) and in
the stored bytes it holds (`window_bytes`), whichever is reached first.
Each watcher has a bounded queue; a watcher that falls that far behind is terminated (its
stream ends and the client resumes from its last resourceVersion) instead of slowing the
others or growing memory. A watch from a revision older than the window gets 410 Expired,
as in Kubernetes. If the etcd watch itself fails past recovery (compaction while
disconnected), the cache relists and terminates its watchers, which then resume or relist.
Everything runs on the API server's event loop: dispatch is synchronous, so a snapshot and
a watcher registration taken without an intervening await are consistent with each other.
`wait_until_fresh` lets a request that needs state at least as new as some revision (a
streaming list's resourceVersion) wait, boundedly, for the cache to get there.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from apiserver.registry.cache_index import CacheIndex
from apiserver.registry.watch_event import SharedEncoding, WatchEvent
from apiserver.registry.watch_fanout import FanOut, FanOuts
from apiserver.storage import errors as serr
from apiserver.storage.interface import Storage
from kube.errors import ResourceExpired, ServiceUnavailable
from kube.tracing import extract_traceparent, object_ref, traceparent_of

__all__ = ["WatchCache", "CacheWatcher", "CachedEvent"]

logger = logging.getLogger(__name__)

Obj = dict[str, Any]
Matcher = Callable[[Obj], bool]
Objects = list[Obj]
Events = list[WatchEvent]


class CachedEvent:
    """One change in the window: the stored bytes of the object and of its previous version.

    `obj` and `prev` are the decoded versions; they are held while the change is dispatched
    (`release` drops them) and decoded again on demand after that. `prev_value` is the same
    bytes object as the previous event's `value`, so it costs nothing to keep.
    """

    __slots__ = ("_obj", "_prev", "decode", "fanout", "key", "prev_value", "revision", "type", "value")

    def __init__(self, revision: int, type_: str, key: str, value: bytes, prev_value: bytes | None,
                 decode: Callable[[bytes, int], Obj], obj: Obj, prev: Obj | None,
                 fanout: FanOut | None = None) -> None:
        self.revision, self.type, self.key = revision, type_, key
        self.value, self.prev_value, self.decode = value, prev_value, decode
        self._obj: Obj | None = obj
        self._prev: Obj | None = prev
        self.fanout = fanout

    @property
    def obj(self) -> Obj:
        return self._obj if self._obj is not None else self.decode(self.value, self.revision)

    @property
    def prev(self) -> Obj | None:
        if self._prev is not None or self.prev_value is None:
            return self._prev
        return self.decode(self.prev_value, 0)

    def release(self) -> None:
        """Drop the decoded versions once every live watcher has its copy."""
        self._obj = self._prev = None

    def size(self) -> int:
        """The bytes this event holds for the window's budget (the previous value is shared)."""
        return len(self.value)


@dataclass(eq=False)
class CacheWatcher:
    """One HTTP watcher's view: its filters, its bounded queue, and whether it was cut off."""

    prefix: str
    matches: Matcher
    after_revision: int
    queue: asyncio.Queue[WatchEvent | None]
    terminated: bool = False

    def classify(self, ev: CachedEvent, shared: SharedEncoding) -> WatchEvent | None:
        """The event as this watcher sees it (selector transitions included), or None."""
        if ev.revision <= self.after_revision or not ev.key.startswith(self.prefix):
            return None
        obj = ev.obj
        now = self.matches(obj)
        if ev.type == "DELETED":
            return WatchEvent("DELETED", obj, shared) if now else None
        before = ev.type == "MODIFIED" and (prev := ev.prev) is not None and self.matches(prev)
        type_ = ("MODIFIED" if before else "ADDED") if now else ("DELETED" if before else None)
        return None if type_ is None else WatchEvent(type_, obj, shared)

    def offer(self, ev: CachedEvent, shared: SharedEncoding) -> bool:
        """Queue `ev` if it concerns this watcher; False when the watcher must be cut off."""
        seen = self.classify(ev, shared)
        if seen is None:
            return True
        try:
            self.queue.put_nowait(seen)
        except asyncio.QueueFull:
            return False
        if ev.fanout is not None:
            ev.fanout.queued()
        return True

    def terminate(self) -> None:
        if self.terminated:
            return
        self.terminated = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


def _fanout_of(obj: Obj, prev: Obj | None, revision: int) -> FanOut | None:
    """A fan-out to record when this change was a traced write (its trace annotation is new)."""
    meta = obj.get("metadata") or {}
    value = traceparent_of(meta)
    if value is None or (prev is not None and traceparent_of(prev.get("metadata")) == value):
        return None
    parent = extract_traceparent(value)
    if parent is None:
        return None
    return FanOut(parent, object_ref(str(obj.get("kind", "")), meta.get("namespace"), meta.get("name")), revision)


class WatchCache:
    def __init__(self, storage: Storage, prefix: str, decode: Callable[[bytes, int], Obj], *,
                 window: int = 10_000, window_bytes: int = 32 << 20, watcher_buffer: int = 1_000) -> None:
        self.storage, self.prefix, self.decode = storage, prefix, decode
        self.window, self.window_bytes, self.watcher_buffer = window, window_bytes, watcher_buffer
        self.objects: dict[str, Obj] = {}
        self.values: dict[str, bytes] = {}  # the stored bytes of each current object: the next event's prev_value
        self.indexes: dict[str, CacheIndex] = {}
        self.events: deque[CachedEvent] = deque()
        self._event_bytes = 0
        self.revision = 0
        self.oldest_revision = 0  # watches from revisions >= this can be served from the window
        self.watchers: set[CacheWatcher] = set()
        self.fanouts = FanOuts()
        self._ready = asyncio.Event()
        self._advanced = asyncio.Event()  # set (and replaced) when `revision` moves on and someone waits
        self._waiting = 0
        self._unreadable: set[str] = set()  # keys already logged as undecryptable

    def is_ready(self) -> bool:
        return self._ready.is_set()

    async def wait_ready(self, timeout: float = 30.0) -> None:
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            raise ServiceUnavailable("the watch cache is not initialized yet, try again") from None

    async def wait_until_fresh(self, revision: int, timeout: float) -> bool:
        """Wait until the cache has seen `revision` (True), or `timeout` seconds passed (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self._waiting += 1
        try:
            while self.revision < revision:
                try:
                    await asyncio.wait_for(self._advanced.wait(), max(deadline - loop.time(), 0))
                except TimeoutError:
                    return self.revision >= revision
            return True
        finally:
            self._waiting -= 1

    def _moved_on(self) -> None:
        if self._waiting:
            advanced, self._advanced = self._advanced, asyncio.Event()
            advanced.set()

    async def _relist(self) -> None:
        try:
            res = await self.storage.list(self.prefix)
        except serr.TransformFailed as e:
            if e.partial is None:
                raise
            # One value that does not decrypt (a lost key) must not take the whole resource
            # down: the cache serves the rest, and a GET of that object answers the error.
            new = [key for key in e.failed_keys if key not in self._unreadable]
            self._unreadable.update(new)
            for key in new:
                logger.error("Cannot decrypt a stored object, leaving it out of the cache",
                             extra={"key": key, "error": e.reason})
            res = e.partial
        self.objects = {kv.key: self.decode(kv.value, kv.mod_revision) for kv in res.items}
        self.values = {kv.key: kv.value for kv in res.items}
        for index in self.indexes.values():
            index.rebuild(self.objects)
        self.revision = self.oldest_revision = res.revision
        self.events.clear()
        self._event_bytes = 0
        for w in list(self.watchers):
            w.terminate()
        self.watchers.clear()
        self._ready.set()
        self._moved_on()

    async def run(self) -> None:
        """Keep the cache in step with etcd until cancelled."""
        backoff = 0.1
        while True:
            try:
                await self._relist()
                backoff = 0.1
                async for ev in self.storage.watch(self.prefix, after_revision=self.revision):
                    self._apply(ev)
            except asyncio.CancelledError:
                raise
            except serr.TransformFailed as e:  # a watched value does not decrypt: relist around it
                self._unreadable.add(e.key)
                logger.error("Cannot decrypt a stored object, relisting without it",
                             extra={"prefix": self.prefix, "key": e.key, "error": e.reason})
            except (serr.StorageError, OSError) as e:
                self._ready.clear()
                logger.warning("Watch cache lost etcd, relisting", extra={"prefix": self.prefix, "error": repr(e)})
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    def _apply(self, ev: Any) -> None:
        if ev.type == "PROGRESS":
            self.revision = max(self.revision, ev.revision)
            self._moved_on()
            return
        obj = self.decode(ev.value, ev.revision)
        prev = self.objects.get(ev.key)
        prev_value = self.values.get(ev.key)
        if ev.type == "DELETED":
            self.objects.pop(ev.key, None)
            self.values.pop(ev.key, None)
            for index in self.indexes.values():
                index.remove(ev.key)
        else:
            self.objects[ev.key] = obj
            self.values[ev.key] = ev.value
            for index in self.indexes.values():
                index.put(ev.key, obj)
        cached = CachedEvent(ev.revision, ev.type, ev.key, ev.value, prev_value, self.decode, obj, prev,
                             _fanout_of(obj, prev, ev.revision))
        self._append(cached)
        self.revision = ev.revision
        self._moved_on()
        shared = SharedEncoding(cached.fanout)
        slow = [w for w in self.watchers if not w.offer(cached, shared)]
        cached.release()
        if cached.fanout is not None:
            self.fanouts.track(cached.fanout)
        for w in slow:
            logger.info("Terminating a watcher that cannot keep up", extra={"prefix": w.prefix})
            w.terminate()
            self.watchers.discard(w)

    def _append(self, cached: CachedEvent) -> None:
        """Add to the window, first dropping the oldest events past either bound."""
        self._event_bytes += cached.size()
        while self.events and (len(self.events) >= self.window or self._event_bytes > self.window_bytes):
            dropped = self.events.popleft()
            self._event_bytes -= dropped.size()
            self.oldest_revision = dropped.revision
        self.events.append(cached)

    def get(self, key: str) -> Obj | None:
        """The current object under `key` (the cache's own: do not change it), or None."""
        return self.objects.get(key)

    def add_index(self, name: str, value_of: Callable[[Obj], str | None]) -> None:
        """Group the current objects by `value_of` from now on, for `by_index(name, ...)`."""
        index = CacheIndex(value_of)
        index.rebuild(self.objects)
        self.indexes[name] = index

    def by_index(self, name: str, value: str) -> list[Obj]:
        """The current objects that index `name` groups under `value` (the cache's own: do not change them)."""
        return self.indexes[name].get(value)

    def iter_objects(self, prefix: str) -> Iterator[Obj]:
        """The current objects under `prefix`, unsorted (the cache's own: do not change them)."""
        if prefix == self.prefix:
            return iter(list(self.objects.values()))
        return iter([obj for key, obj in self.objects.items() if key.startswith(prefix)])

    def list(self, prefix: str, matches: Matcher) -> tuple[list[Obj], int]:
        """The matching current objects under prefix, sorted by key, and the cache revision."""
        items = [obj for key, obj in sorted(self.objects.items()) if key.startswith(prefix) and matches(obj)]
        return items, self.revision

    def watch(self, prefix: str, matches: Matcher, *,
              resource_version: int | None) -> tuple[CacheWatcher, Objects, Events]:
        """Register a watcher; return it, the objects to send first as ADDED (rv unset/0), and
        the buffered events after the requested revision to replay before the live ones.

        A resourceVersion older than the event window raises ResourceExpired (410).
        """
        initial: list[Obj] = []
        queue: asyncio.Queue[WatchEvent | None] = asyncio.Queue(maxsize=self.watcher_buffer)
        if resource_version is None:
            initial, after = self.list(prefix, matches)
        else:
            after = resource_version
            if after < self.oldest_revision:
                raise ResourceExpired(f"too old resource version: {after} ({self.oldest_revision})")
        watcher = CacheWatcher(prefix, matches, after, queue)
        backlog = []
        for ev in self.events:
            seen = watcher.classify(ev, SharedEncoding(ev.fanout))
            if seen is not None:
                backlog.append(seen)
        self.watchers.add(watcher)
        return watcher, initial, backlog

    def stop_watching(self, watcher: CacheWatcher) -> None:
        self.watchers.discard(watcher)
