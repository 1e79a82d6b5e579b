"""Streaming lists (KEP-3157, "watch-list"): where a `sendInitialEvents` watch starts.

Mirrors the cacher's Watch for `sendInitialEvents` with resourceVersionMatch=NotOlderThan:
- sendInitialEvents=true: the current state comes first as ADDED events, then (with
  allowWatchBookmarks) one BOOKMARK annotated `k8s.io/initial-events-end: "true"` carrying
  the state's resourceVersion, then every change after it. The state is at least as new as
  asked: resourceVersion "" means the latest (a consistent read of etcd), "0" any (the
  cache as it is), N at least N (the cache once it reaches N; 504 Too large resource version
  when the store has not got there within a few seconds);
- sendInitialEvents=false: no initial events; the watch starts at the latest revision
  (""), the cache's ("0"), or N.
Validation of the option combinations happens before (endpoints/list_validation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apiserver.registry.paging import too_large_resource_version
from apiserver.registry.watch_event import WatchEvent
from apiserver.storage import errors as serr
from kube.errors import ServiceUnavailable

if TYPE_CHECKING:
    from apiserver.registry.generic import RegistryStore
    from apiserver.registry.watch_cache import CacheWatcher

__all__ = ["INITIAL_EVENTS_END", "WatchListStart", "start_watch_list", "initial_events_end"]

Obj = dict[str, Any]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
FRESHNESS_TIMEOUT = 3.0
"""How long a request for a resourceVersion the cache has not reached waits (upstream's 3 s)."""


@dataclass
class WatchListStart:
    """A registered cache watcher with what to send before its live events."""

    watcher: CacheWatcher
    initial: list[Obj]
    backlog: list[WatchEvent]
    initial_end: int | None
    """The revision to announce as the end of the initial events (None: no initial events)."""


def initial_events_end(kind: str, api_version: str, revision: int) -> WatchEvent:
    """The BOOKMARK that tells a streaming list its initial state is complete."""
    return WatchEvent("BOOKMARK", {"kind": kind, "apiVersion": api_version, "metadata": {
        "resourceVersion": str(revision), "annotations": {INITIAL_EVENTS_END: "true"}}})


async def _current_revision(store: RegistryStore) -> int:
    try:
        return await store.storage.current_revision()
    except serr.Unavailable as e:
        raise ServiceUnavailable(str(e)) from e


async def _consistent_snapshot(store: RegistryStore, prefix: str,
                               matches: Callable[[Obj], bool]) -> tuple[list[Obj], int]:
    """The matching objects under `prefix` as etcd has them now, and that revision."""
    try:
        res = await store.storage.list(prefix)
    except serr.Unavailable as e:
        raise ServiceUnavailable(str(e)) from e
    objs = [store.decode(kv.value, kv.mod_revision) for kv in res.items]
    return [o for o in objs if matches(o)], res.revision


async def start_watch_list(store: RegistryStore, prefix: str, matches: Callable[[Obj], bool], *,
                           send_initial_events: bool, requested: int | None) -> WatchListStart:
    """Register a watcher on `store`'s cache for a streaming list; see the module docstring.

    Raises Timeout (504) for a resourceVersion the store has not reached, ResourceExpired
    (410) if the cache cannot serve from where the state was read.
    """
    cache = store.cache
    assert cache is not None
    await cache.wait_ready()
    if not send_initial_events:
        after = await _current_revision(store) if requested is None else requested or cache.revision
        watcher, _, backlog = cache.watch(prefix, matches, resource_version=after)
        return WatchListStart(watcher, [], backlog, None)
    if requested is not None and requested > cache.revision \
            and not await cache.wait_until_fresh(requested, FRESHNESS_TIMEOUT):
        current = await _current_revision(store)
        if requested > current:
            raise too_large_resource_version(requested, current)
        requested = None  # etcd has it, the cache is just behind: read etcd
    if requested is None:
        initial, revision = await _consistent_snapshot(store, prefix, matches)
        watcher, _, backlog = cache.watch(prefix, matches, resource_version=revision)
        return WatchListStart(watcher, initial, backlog, revision)
    watcher, initial, backlog = cache.watch(prefix, matches, resource_version=None)
    return WatchListStart(watcher, initial, backlog, watcher.after_revision)
