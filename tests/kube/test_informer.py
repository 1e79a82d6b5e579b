"""SharedInformer against an in-process list/watch server: handlers, relist diffs, resync."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from kube.api import Pod
from kube.cache import EventHandler, SharedInformer
from kube.client import ClientConfig, RESTClient
from kube.clock import FakeClock
from tests.kube.inprocess_api import Hook, InProcessApi
from tests.kube.waiting import settle, until

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, node: str = "") -> dict[str, object]:
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


class Recorder:
    """Handlers that log what they were called with, as (kind, name, resourceVersion...)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def handler(self) -> EventHandler[Pod]:
        return EventHandler(
            on_add=lambda p: self.calls.append(("add", str(p.metadata.name), str(p.metadata.resource_version))),
            on_update=lambda old, new: self.calls.append(("update", str(new.metadata.name),
                                                          str(old.metadata.resource_version),
                                                          str(new.metadata.resource_version))),
            on_delete=lambda p: self.calls.append(("delete", str(p.metadata.name))))


Start = Callable[..., SharedInformer[Pod]]


@pytest.fixture
def api() -> InProcessApi:
    server = InProcessApi()
    server.put(f"{PODS}/a", pod("a", "n1"))
    server.put(f"{PODS}/b", pod("b", "n2"))
    server.put(f"{PODS}/c", pod("c", "n1"))
    return server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def start(api: InProcessApi, clock: FakeClock) -> AsyncIterator[Start]:
    tasks: list[asyncio.Task[None]] = []
    clients: list[RESTClient] = []

    def go(*, before: Hook | None = None, resync_period: float | None = None) -> SharedInformer[Pod]:
        client = RESTClient(ClientConfig(server="http://api.test"), transport=api.transport(before=before))
        clients.append(client)
        informer = SharedInformer(client, Pod, namespace="default", clock=clock, resync_period=resync_period)
        tasks.append(asyncio.create_task(informer.run()))
        return informer

    yield go
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.close()


async def test_the_first_list_fills_the_store_and_is_delivered_as_adds(api: InProcessApi, start: Start) -> None:
    rec = Recorder()
    informer = start()
    informer.add_event_handler(rec.handler())
    assert not informer.has_synced()
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    assert sorted(rec.calls) == [("add", "a", "1"), ("add", "b", "2"), ("add", "c", "3")]
    assert sorted(informer.store.keys()) == ["default/a", "default/b", "default/c"]
    assert informer.last_resource_version == "3"


async def test_watch_events_reach_the_store_and_every_handler(api: InProcessApi, start: Start) -> None:
    first, second = Recorder(), Recorder()
    informer = start()
    informer.add_event_handler(first.handler())
    informer.add_event_handler(second.handler())
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    await until(lambda: api.watches(), message="the watch")
    first.calls.clear()
    second.calls.clear()

    api.put(f"{PODS}/d", pod("d"))
    api.put(f"{PODS}/a", pod("a", "n3"))
    api.remove(f"{PODS}/b")
    await until(lambda: len(first.calls) == 3, message="three events")
    assert first.calls == [("add", "d", "4"), ("update", "a", "1", "5"), ("delete", "b")]
    assert second.calls == first.calls
    stored = informer.store.get("default/a")
    assert stored is not None and stored.spec.node_name == "n3"
    assert informer.store.get("default/b") is None


async def test_a_handler_added_after_sync_gets_the_cache_as_adds(start: Start) -> None:
    informer = start()
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    late = Recorder()
    informer.add_event_handler(late.handler())
    assert sorted(c[1] for c in late.calls) == ["a", "b", "c"]


async def test_a_failing_handler_does_not_stop_the_others(api: InProcessApi, start: Start) -> None:
    def broken(p: Pod) -> None:
        raise RuntimeError("handler bug")

    rec = Recorder()
    informer = start()
    informer.add_event_handler(EventHandler(on_add=broken))
    informer.add_event_handler(rec.handler())
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    api.put(f"{PODS}/d", pod("d"))
    await until(lambda: ("add", "d", "4") in rec.calls, message="the add after a handler failed")


async def test_a_relist_after_410_synthesizes_the_changes_it_missed(api: InProcessApi, clock: FakeClock,
                                                                    start: Start) -> None:
    gate, held = asyncio.Event(), asyncio.Event()

    async def hold_first_watch(request: httpx.Request) -> None:
        if request.url.params.get("watch") == "true" and not gate.is_set():
            held.set()
            await gate.wait()

    rec = Recorder()
    informer = start(before=hold_first_watch)
    informer.add_event_handler(rec.handler())
    await until(held.is_set, message="the first watch")
    rec.calls.clear()
    api.put(f"{PODS}/a", pod("a", "n9"))   # changed
    api.remove(f"{PODS}/b")                # gone
    api.put(f"{PODS}/d", pod("d"))         # new; c is untouched
    api.compact()
    gate.set()
    await until(clock.has_waiters, message="the backoff after 410")
    clock.step(2.0)
    await until(lambda: len(rec.calls) == 3, message="the diff of the relist")
    await settle()
    assert sorted(rec.calls) == [("add", "d", "6"), ("delete", "b"), ("update", "a", "1", "4")]
    assert sorted(informer.store.keys()) == ["default/a", "default/c", "default/d"]


async def test_resync_redelivers_every_object_as_an_update(start: Start, clock: FakeClock) -> None:
    rec = Recorder()
    informer = start(resync_period=30.0)
    informer.add_event_handler(rec.handler())
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    rec.calls.clear()
    clock.step(29.0)
    await settle()
    assert rec.calls == []
    clock.step(1.0)
    await until(lambda: len(rec.calls) == 3, message="the resync")
    assert sorted(rec.calls) == [("update", "a", "1", "1"), ("update", "b", "2", "2"), ("update", "c", "3", "3")]


async def test_indexes_follow_the_watch(api: InProcessApi, start: Start) -> None:
    informer = start()
    informer.add_indexers({"node": lambda p: [p.spec.node_name] if p.spec.node_name else []})
    await asyncio.wait_for(informer.wait_for_sync(), 5)
    assert sorted(str(p.metadata.name) for p in informer.store.by_index("node", "n1")) == ["a", "c"]
    api.put(f"{PODS}/a", pod("a", "n2"))
    await until(lambda: len(informer.store.by_index("node", "n1")) == 1, message="a moved off n1")
    assert sorted(str(p.metadata.name) for p in informer.store.by_index("node", "n2")) == ["a", "b"]
