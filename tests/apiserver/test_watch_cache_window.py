"""The watch cache's window keeps past versions as stored bytes and is bounded in bytes too.

A real etcd and a real cache: writes go through the registry, and watches resumed from a
revision inside the window must replay each version exactly as it was stored (selector
transitions included), while a revision older than what the byte budget kept gets 410.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.registry.generic import RegistryStore
from apiserver.registry.watch_cache import WatchCache
from kube.errors import AlreadyExists, ResourceExpired

NS = "default"


@contextlib.asynccontextmanager
async def running(cache: WatchCache) -> AsyncIterator[WatchCache]:
    task = asyncio.create_task(cache.run())
    try:
        await cache.wait_ready()
        yield cache
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def write(store: RegistryStore, name: str, value: str, **labels: str) -> int:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels},
            "data": {"v": value}}
    try:
        out = await store.create(NS, body)
    except AlreadyExists:
        out = await store.patch(NS, name, lambda o: {**o, "metadata": {**o["metadata"], "labels": labels},
                                                     "data": {"v": value}})
    return int(out["metadata"]["resourceVersion"])


def labelled(key: str, value: str) -> Any:
    return lambda obj: (obj.get("metadata", {}).get("labels") or {}).get(key) == value


async def test_a_resumed_watch_replays_stored_versions_with_selector_transitions(configmaps: RegistryStore) -> None:
    cache = WatchCache(configmaps.storage, configmaps.prefix(None), configmaps.decode)
    async with running(cache):
        start = cache.revision
        await write(configmaps, "a", "one", tier="front")
        await write(configmaps, "a", "two", tier="back")
        last = await write(configmaps, "a", "three", tier="back")
        assert await cache.wait_until_fresh(last, 10)

        _, _, front = cache.watch(configmaps.prefix(NS), labelled("tier", "front"), resource_version=start)
        _, _, back = cache.watch(configmaps.prefix(NS), labelled("tier", "back"), resource_version=start)

    assert [(e.type, e.object["data"]["v"]) for e in front] == [("ADDED", "one"), ("DELETED", "two")]
    assert [(e.type, e.object["data"]["v"]) for e in back] == [("ADDED", "two"), ("MODIFIED", "three")]
    assert back[-1].object["metadata"]["resourceVersion"] == str(last)
    assert b'"v":"three"' in back[-1].line()


async def test_the_window_is_bounded_by_stored_bytes(configmaps: RegistryStore) -> None:
    cache = WatchCache(configmaps.storage, configmaps.prefix(None), configmaps.decode, window_bytes=8_000)
    async with running(cache):
        start = cache.revision
        revisions = [await write(configmaps, f"big-{i}", "x" * 1_000) for i in range(20)]
        assert await cache.wait_until_fresh(revisions[-1], 10)

        assert 0 < len(cache.events) < 10
        assert sum(len(e.value) for e in cache.events) <= 8_000
        with pytest.raises(ResourceExpired):
            cache.watch(configmaps.prefix(NS), lambda _: True, resource_version=start)
        _, _, recent = cache.watch(configmaps.prefix(NS), lambda _: True, resource_version=revisions[-3])
    assert [e.object["metadata"]["name"] for e in recent] == ["big-18", "big-19"]
