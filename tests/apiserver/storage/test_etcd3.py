"""Contract tests of Etcd3Storage against a real etcd.

They pin down what the registries and the watch cache rely on: optimistic concurrency,
consistent (and paged, and historical) lists, exactly-once ordered watches that survive an
etcd restart, compaction reported as Compacted, and watches that release their etcd watcher
when closed. Conditions are awaited with deadlines, never with bare sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from apiserver.storage import (
    Compacted,
    Etcd3Storage,
    FutureRevision,
    KeyExists,
    KeyNotFound,
    KeyValue,
    RevisionConflict,
    Storage,
    Unavailable,
    WatchEvent,
)
from kube.testing.etcd import EtcdProcess
from kube.testing.eventually import eventually
from kube.testing.ports import free_port

pytestmark = pytest.mark.timeout(60)


async def next_event(events: AsyncIterator[WatchEvent], timeout: float = 10.0) -> WatchEvent:
    """The next non-PROGRESS event, within `timeout` seconds."""
    async def pull() -> WatchEvent:
        while True:
            ev = await events.__anext__()
            if ev.type != "PROGRESS":
                return ev
    return await asyncio.wait_for(pull(), timeout)


def watcher_count(endpoint: str) -> int:
    """etcd's gauge of open watchers, from its /metrics endpoint."""
    with urllib.request.urlopen(f"{endpoint}/metrics", timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("etcd_debugging_mvcc_watcher_total "):
                return int(float(line.split()[1]))
    raise AssertionError("etcd exposes no watcher gauge")


async def watchers_become(endpoint: str, expected: int) -> None:
    async def check() -> bool:
        return await asyncio.to_thread(watcher_count, endpoint) == expected
    await eventually(check, timeout=10, message=f"etcd watcher count == {expected}")


# -- basic key-value operations --------------------------------------------------------------


async def test_satisfies_protocol(storage: Etcd3Storage) -> None:
    assert isinstance(storage, Storage)


async def test_create_and_get(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    rev = await storage.create(key, b"one")
    got = await storage.get(key)
    assert got == KeyValue(key=key, value=b"one", mod_revision=rev, create_revision=rev)
    assert await storage.current_revision() >= rev


async def test_create_twice_raises_key_exists(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    await storage.create(key, b"one")
    with pytest.raises(KeyExists) as info:
        await storage.create(key, b"two")
    assert info.value.key == key
    assert (await storage.get(key)).value == b"one"


async def test_get_missing_raises_key_not_found(storage: Etcd3Storage, etcd_prefix: str) -> None:
    with pytest.raises(KeyNotFound):
        await storage.get(etcd_prefix + "nope")


async def test_list_prefix_sorted_with_revision(storage: Etcd3Storage, etcd_prefix: str) -> None:
    for name in ("c", "a", "b"):
        await storage.create(etcd_prefix + name, name.encode())
    await storage.create(etcd_prefix[:-1] + "-sibling/x", b"not mine")
    await storage.create(etcd_prefix[:-1] + "x", b"not mine either")
    result = await storage.list(etcd_prefix)
    assert [kv.key for kv in result.items] == [etcd_prefix + n for n in ("a", "b", "c")]
    assert [kv.value for kv in result.items] == [b"a", b"b", b"c"]
    assert result.revision == await storage.current_revision()
    assert result.more is False
    assert await storage.count(etcd_prefix) == 3


async def test_list_paging_reads_one_snapshot(storage: Etcd3Storage, etcd_prefix: str) -> None:
    names = [f"k{i}" for i in range(5)]
    for name in names:
        await storage.create(etcd_prefix + name, name.encode())
    first = await storage.list(etcd_prefix, limit=2)
    assert [kv.key for kv in first.items] == [etcd_prefix + "k0", etcd_prefix + "k1"]
    assert first.more is True
    # A write between pages must not show up in later pages read at the first page's revision.
    await storage.create(etcd_prefix + "k2a", b"late")
    seen = list(first.items)
    page = first
    while page.more:
        page = await storage.list(etcd_prefix, revision=first.revision, limit=2,
                                  start_key=page.items[-1].key + "\0")
        assert page.revision == first.revision
        seen.extend(page.items)
    assert [kv.key for kv in seen] == [etcd_prefix + n for n in names]
    # start_key is inclusive.
    inclusive = await storage.list(etcd_prefix, start_key=etcd_prefix + "k3")
    assert [kv.key for kv in inclusive.items] == [etcd_prefix + "k3", etcd_prefix + "k4"]


async def test_list_at_old_revision_returns_old_state(storage: Etcd3Storage, etcd_prefix: str) -> None:
    rev1 = await storage.create(etcd_prefix + "a", b"v1")
    rev2 = await storage.update(etcd_prefix + "a", b"v2", expected_revision=rev1)
    await storage.create(etcd_prefix + "b", b"b")
    await storage.delete(etcd_prefix + "a")
    old = await storage.list(etcd_prefix, revision=rev1)
    assert old.revision == rev1
    assert [(kv.key, kv.value) for kv in old.items] == [(etcd_prefix + "a", b"v1")]
    mid = await storage.list(etcd_prefix, revision=rev2)
    assert [(kv.key, kv.value, kv.mod_revision) for kv in mid.items] == [(etcd_prefix + "a", b"v2", rev2)]
    now = await storage.list(etcd_prefix)
    assert [kv.key for kv in now.items] == [etcd_prefix + "b"]


async def test_list_future_revision_raises(storage: Etcd3Storage, etcd_prefix: str) -> None:
    with pytest.raises(FutureRevision):
        await storage.list(etcd_prefix, revision=await storage.current_revision() + 1000)


async def test_update_is_compare_and_swap(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    rev1 = await storage.create(key, b"v1")
    rev2 = await storage.update(key, b"v2", expected_revision=rev1)
    assert rev2 > rev1
    with pytest.raises(RevisionConflict) as info:
        await storage.update(key, b"stale", expected_revision=rev1)
    assert info.value.current == KeyValue(key=key, value=b"v2", mod_revision=rev2, create_revision=rev1)
    assert (await storage.get(key)).value == b"v2"
    with pytest.raises(KeyNotFound):
        await storage.update(etcd_prefix + "missing", b"x", expected_revision=rev1)
    with pytest.raises(KeyNotFound):  # a missing key's mod revision reads as 0: must not match
        await storage.update(etcd_prefix + "missing", b"x", expected_revision=0)


async def test_guaranteed_update_retries_after_concurrent_write(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "counter"
    await storage.create(key, b"0")
    seen: list[bytes] = []

    async def increment(current: KeyValue) -> bytes:
        seen.append(current.value)
        if len(seen) == 1:  # a concurrent writer wins the race against our first attempt
            await storage.update(key, b"10", expected_revision=current.mod_revision)
        return str(int(current.value) + 1).encode()

    written = await storage.guaranteed_update(key, increment)
    assert seen == [b"0", b"10"]
    assert written.value == b"11"
    assert written == await storage.get(key)


async def test_guaranteed_update_none_writes_nothing(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    rev = await storage.create(key, b"v")
    before = await storage.current_revision()

    async def no_change(current: KeyValue) -> bytes | None:
        return None

    result = await storage.guaranteed_update(key, no_change)
    assert result == KeyValue(key=key, value=b"v", mod_revision=rev, create_revision=rev)
    assert await storage.current_revision() == before


async def test_guaranteed_update_errors(storage: Etcd3Storage, etcd_prefix: str) -> None:
    class Refused(Exception):
        pass

    async def refuse(current: KeyValue) -> bytes:
        raise Refused()

    with pytest.raises(KeyNotFound):
        await storage.guaranteed_update(etcd_prefix + "missing", refuse)
    await storage.create(etcd_prefix + "a", b"v")
    with pytest.raises(Refused):
        await storage.guaranteed_update(etcd_prefix + "a", refuse)


async def test_guaranteed_update_gives_up_after_max_retries(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    await storage.create(key, b"0")
    calls = 0

    async def always_loses(current: KeyValue) -> bytes:
        nonlocal calls
        calls += 1
        await storage.update(key, b"other", expected_revision=current.mod_revision)
        return b"mine"

    with pytest.raises(RevisionConflict):
        await storage.guaranteed_update(key, always_loses, max_retries=2)
    assert calls == 3


async def test_delete(storage: Etcd3Storage, etcd_prefix: str) -> None:
    key = etcd_prefix + "a"
    rev1 = await storage.create(key, b"v1")
    rev2 = await storage.update(key, b"v2", expected_revision=rev1)
    with pytest.raises(RevisionConflict) as info:
        await storage.delete(key, expected_revision=rev1)
    assert info.value.current is not None and info.value.current.mod_revision == rev2
    deleted, rev3 = await storage.delete(key, expected_revision=rev2)
    assert deleted == KeyValue(key=key, value=b"v2", mod_revision=rev2, create_revision=rev1)
    assert rev3 > rev2
    with pytest.raises(KeyNotFound):
        await storage.get(key)
    with pytest.raises(KeyNotFound):
        await storage.delete(key)
    with pytest.raises(KeyNotFound):
        await storage.delete(key, expected_revision=rev2)


# -- watch -----------------------------------------------------------------------------------


async def test_watch_replays_later_events_in_order(storage: Etcd3Storage, etcd_prefix: str) -> None:
    a, b = etcd_prefix + "a", etcd_prefix + "b"
    start = await storage.create(a, b"ignored-before-start")
    r1 = await storage.update(a, b"a1", expected_revision=start)
    r2 = await storage.create(b, b"b0")
    _, r3 = await storage.delete(a)
    r4 = await storage.create(a, b"a-again")
    async with contextlib.aclosing(storage.watch(etcd_prefix, after_revision=start)) as events:
        got = [await next_event(events) for _ in range(4)]
        assert got == [
            WatchEvent("MODIFIED", a, b"a1", b"ignored-before-start", r1),
            WatchEvent("ADDED", b, b"b0", None, r2),
            WatchEvent("DELETED", a, b"a1", b"a1", r3),
            WatchEvent("ADDED", a, b"a-again", None, r4),
        ]
        # ... and then live events, continuing in order.
        r5 = await storage.update(b, b"b1", expected_revision=r2)
        assert await next_event(events) == WatchEvent("MODIFIED", b, b"b1", b"b0", r5)


async def test_watch_sees_only_its_prefix(storage: Etcd3Storage, etcd_prefix: str) -> None:
    start = await storage.current_revision()
    await storage.create(etcd_prefix[:-1] + "-other/x", b"no")
    await storage.create(etcd_prefix[:-1], b"no")
    await storage.create("/elsewhere" + etcd_prefix, b"no")
    mine = await storage.create(etcd_prefix + "x", b"yes")
    async with contextlib.aclosing(storage.watch(etcd_prefix, after_revision=start)) as events:
        ev = await next_event(events)
        assert (ev.key, ev.revision) == (etcd_prefix + "x", mine)


async def test_compaction(storage: Etcd3Storage, etcd_prefix: str) -> None:
    old = await storage.create(etcd_prefix + "a", b"v1")
    now = await storage.update(etcd_prefix + "a", b"v2", expected_revision=old)
    await storage.compact(now)
    await storage.compact(now)  # compacting again is a no-op
    with pytest.raises(Compacted) as listed:
        await storage.list(etcd_prefix, revision=old)
    assert listed.value.requested_revision == old
    assert listed.value.compacted_revision >= now
    events = storage.watch(etcd_prefix, after_revision=old - 1)
    with pytest.raises(Compacted) as watched:
        await next_event(events)
    assert watched.value.requested_revision == old
    assert watched.value.compacted_revision >= now
    # The compaction revision itself is still readable and watchable.
    assert [kv.value for kv in (await storage.list(etcd_prefix, revision=now)).items] == [b"v2"]
    async with contextlib.aclosing(storage.watch(etcd_prefix, after_revision=now - 1)) as events2:
        assert (await next_event(events2)).revision == now


async def test_healthy(storage: Etcd3Storage) -> None:
    assert await storage.healthy() is True
    await storage.close()
    assert await storage.healthy() is False


async def test_connect_to_nothing_raises_unavailable() -> None:
    with pytest.raises(Unavailable):
        await Etcd3Storage.connect([f"http://127.0.0.1:{free_port()}"], timeout=0.5)


async def test_connect_uses_first_reachable(etcd_endpoint: str) -> None:
    """Members on one address share one channel (`cluster_endpoint`), which skips the dead one."""
    s = await Etcd3Storage.connect([f"http://127.0.0.1:{free_port()}", etcd_endpoint], timeout=3)
    try:
        assert etcd_endpoint in s.endpoint.split(",")
        assert await s.healthy()
    finally:
        await s.close()


async def test_closing_a_watch_releases_the_etcd_watcher(storage: Etcd3Storage, etcd_prefix: str,
                                                         etcd_endpoint: str) -> None:
    baseline = await asyncio.to_thread(watcher_count, etcd_endpoint)
    start = await storage.create(etcd_prefix + "a", b"v")

    # 1. aclose()
    events = storage.watch(etcd_prefix, after_revision=start - 1)
    await next_event(events)
    await watchers_become(etcd_endpoint, baseline + 1)
    await events.aclose()
    await watchers_become(etcd_endpoint, baseline)

    # 2. break out of `async for` (the generator is finalised once unreferenced)
    async for _ in storage.watch(etcd_prefix, after_revision=start - 1):
        break
    gc.collect()
    await watchers_become(etcd_endpoint, baseline)

    # 3. cancel the task blocked waiting for the next event
    got_one = asyncio.Event()

    async def consume() -> None:
        async for _ in storage.watch(etcd_prefix, after_revision=start - 1):
            got_one.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_one.wait(), 10)
    await watchers_become(etcd_endpoint, baseline + 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await watchers_become(etcd_endpoint, baseline)


async def test_closing_storage_ends_open_watches(etcd_endpoint: str, etcd_prefix: str) -> None:
    s = await Etcd3Storage.connect([etcd_endpoint])
    start = await s.create(etcd_prefix + "a", b"v")
    events = s.watch(etcd_prefix, after_revision=start - 1)
    await next_event(events)
    pending = asyncio.ensure_future(events.__anext__())
    await s.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 10)


# -- watch against a private etcd --------------------------------------------------------------


async def test_watch_survives_etcd_restart(tmp_path: Path) -> None:
    etcd = EtcdProcess(data_dir=tmp_path / "etcd", client_port=free_port(), peer_port=free_port()).start()
    try:
        s = await Etcd3Storage.connect([etcd.endpoint])
        try:
            r1 = await s.create("/restart/a", b"1")
            received: asyncio.Queue[WatchEvent] = asyncio.Queue()

            async def consume() -> None:
                async for ev in s.watch("/restart/", after_revision=r1 - 1):
                    await received.put(ev)

            consumer = asyncio.create_task(consume())
            try:
                assert (await asyncio.wait_for(received.get(), 10)).revision == r1
                await asyncio.to_thread(etcd.stop)
                assert not await s.healthy()
                await asyncio.to_thread(etcd.start)

                async def write() -> int:
                    return await s.update("/restart/a", b"2", expected_revision=r1)
                r2 = await eventually(write, timeout=10, interval=0.2, message="write after restart")
                r3 = await s.create("/restart/b", b"3")
                got = [await asyncio.wait_for(received.get(), 10) for _ in range(2)]
                assert got == [WatchEvent("MODIFIED", "/restart/a", b"2", b"1", r2),
                               WatchEvent("ADDED", "/restart/b", b"3", None, r3)]
                assert received.empty()  # nothing delivered twice
                assert not consumer.done()
            finally:
                consumer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await consumer
        finally:
            await s.close()
    finally:
        etcd.stop()


@contextlib.contextmanager
def etcd_with_fast_progress(data_dir: Path) -> Iterator[str]:
    """A private etcd sending watch progress notifications every 200 ms."""
    with EtcdProcess(data_dir=data_dir, extra_args=["--experimental-watch-progress-notify-interval=200ms"]) as etcd:
        yield etcd.endpoint


async def test_watch_emits_progress(tmp_path: Path) -> None:
    with etcd_with_fast_progress(tmp_path / "etcd") as endpoint:
        s = await Etcd3Storage.connect([endpoint])
        try:
            r1 = await s.create("/progress/a", b"1")
            async with contextlib.aclosing(s.watch("/progress/", after_revision=r1 - 1)) as events:
                assert (await next_event(events)).revision == r1
                r2 = await s.create("/unwatched/x", b"x")  # moves the store revision, not the watch

                async def progress_at_r2() -> WatchEvent:
                    while True:
                        ev = await events.__anext__()
                        assert ev.type == "PROGRESS", ev
                        if ev.revision >= r2:
                            return ev
                ev = await asyncio.wait_for(progress_at_r2(), 10)
                assert (ev.key, ev.value, ev.prev_value) == ("", None, None)
                r3 = await s.create("/progress/b", b"2")
                assert (await next_event(events)).revision == r3
        finally:
            await s.close()
