"""The Reflector against an in-process list/watch server, on a fake clock."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from kube.api import Pod
from kube.backoff import ExponentialBackoff
from kube.cache import Reflector
from kube.client import ClientConfig, RESTClient
from kube.clock import FakeClock
from tests.kube.inprocess_api import Hook, InProcessApi
from tests.kube.waiting import advance, settle, until

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, **labels: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class RecordingSink:
    def __init__(self) -> None:
        self.replaces: list[tuple[list[str], str]] = []
        self.events: list[tuple[str, str, str]] = []

    def replace(self, items: list[Pod], resource_version: str) -> None:
        self.replaces.append(([str(p.metadata.name) for p in items], resource_version))

    def on_event(self, type_: str, obj: Pod) -> None:
        self.events.append((type_, str(obj.metadata.name), str(obj.metadata.resource_version)))

    def forget(self, key: str) -> None:
        self.events.append(("FORGET", key, ""))


Started = Callable[..., Awaitable[tuple[Reflector[Pod], RecordingSink]]]


@pytest.fixture
def api() -> InProcessApi:
    server = InProcessApi()
    server.put(f"{PODS}/a", pod("a"))
    server.put(f"{PODS}/b", pod("b"))
    return server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def start(api: InProcessApi, clock: FakeClock) -> AsyncIterator[Started]:
    tasks: list[asyncio.Task[None]] = []
    clients: list[RESTClient] = []

    async def go(*, before: Hook | None = None) -> tuple[Reflector[Pod], RecordingSink]:
        client = RESTClient(ClientConfig(server="http://api.test"), transport=api.transport(before=before))
        clients.append(client)
        sink = RecordingSink()
        reflector = Reflector(client, Pod, sink, namespace="default", clock=clock,
                              backoff=ExponentialBackoff(clock, rand=lambda: 0.0))
        tasks.append(asyncio.create_task(reflector.run()))
        return reflector, sink

    yield go
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.close()


async def test_lists_then_watches_from_the_lists_resource_version(api: InProcessApi, start: Started) -> None:
    reflector, sink = await start()
    await until(lambda: api.watches(), message="a watch request")
    assert sink.replaces == [(["a", "b"], "2")]
    assert api.watches()[0].params["resourceVersion"] == "2"

    api.put(f"{PODS}/c", pod("c"))
    api.put(f"{PODS}/a", pod("a", tier="web"))
    api.remove(f"{PODS}/b")
    await until(lambda: len(sink.events) == 3, message="three watch events")
    assert sink.events == [("ADDED", "c", "3"), ("MODIFIED", "a", "4"), ("DELETED", "b", "5")]
    assert reflector.last_resource_version == "5"


async def test_a_dropped_watch_resumes_from_the_last_resource_version_without_relisting(
        api: InProcessApi, start: Started) -> None:
    _, sink = await start()
    await until(lambda: api.watches(), message="a watch request")
    api.put(f"{PODS}/c", pod("c"))
    await until(lambda: sink.events, message="the ADDED event")

    api.end_watches()
    api.put(f"{PODS}/d", pod("d"))  # written while no watch is open: must not be lost
    await until(lambda: len(api.watches()) == 2, message="a second watch")
    assert api.watches()[1].params["resourceVersion"] == "3"
    await until(lambda: len(sink.events) == 2, message="the event written between the watches")
    assert sink.events[1] == ("ADDED", "d", "4")
    assert len(api.lists()) == 1


async def test_410_gone_relists_after_a_backoff_and_watches_from_the_new_list(
        api: InProcessApi, clock: FakeClock, start: Started) -> None:
    gate, held = asyncio.Event(), asyncio.Event()

    async def hold_first_watch(request: httpx.Request) -> None:
        if request.url.params.get("watch") == "true" and not gate.is_set():
            held.set()
            await gate.wait()

    _, sink = await start(before=hold_first_watch)
    await until(held.is_set, message="the first watch request")
    api.put(f"{PODS}/c", pod("c"))
    api.remove(f"{PODS}/a")
    api.compact()  # the reflector's resourceVersion 2 is gone now
    gate.set()

    await until(clock.has_waiters, message="the reflector backing off after 410")
    await settle()
    assert len(api.lists()) == 1
    clock.step(0.8)
    await until(lambda: len(sink.replaces) == 2, message="a relist")
    assert sink.replaces[1] == (["b", "c"], "4")
    await until(lambda: len(api.watches()) == 2, message="a watch after the relist")
    assert api.watches()[1].params["resourceVersion"] == "4"
    assert sink.events == []


async def test_a_watch_that_ends_at_once_backs_off_exponentially_up_to_the_cap(
        api: InProcessApi, clock: FakeClock, start: Started) -> None:
    api.hold_watches = False  # every watch closes as soon as it opens, with nothing to send
    watch_times: list[float] = []

    async def record(request: httpx.Request) -> None:
        if request.url.params.get("watch") == "true":
            watch_times.append(clock.now())

    await start(before=record)
    await until(lambda: watch_times, message="the first watch")
    await settle()
    assert len(watch_times) == 1  # not re-watching in a tight loop

    await advance(clock, 140.0, step=0.1)
    gaps = [b - a for a, b in itertools.pairwise(watch_times)]
    assert gaps[:7] == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0], abs=0.11)
    assert all(gap == pytest.approx(30.0, abs=0.11) for gap in gaps[6:])


async def test_a_watch_that_delivered_events_or_ran_long_is_renewed_at_once(
        api: InProcessApi, clock: FakeClock, start: Started) -> None:
    _, sink = await start()
    await until(lambda: api.watches(), message="the first watch")
    api.put(f"{PODS}/c", pod("c"))
    await until(lambda: sink.events, message="an event")
    api.end_watches()
    await until(lambda: len(api.watches()) == 2, message="an immediate second watch")

    clock.step(5.0)  # a quiet watch that lasted longer than a second
    api.end_watches()
    await until(lambda: len(api.watches()) == 3, message="an immediate third watch")


async def test_a_failing_list_is_retried_after_a_backoff(api: InProcessApi, clock: FakeClock,
                                                         start: Started) -> None:
    failures = 2

    async def refuse(request: httpx.Request) -> None:
        nonlocal failures
        if failures:
            failures -= 1
            raise httpx.ConnectError("connection refused", request=request)

    _, sink = await start(before=refuse)
    await until(clock.has_waiters, message="backing off after the first failure")
    clock.step(0.8)
    await until(lambda: failures == 0 and clock.has_waiters(), message="backing off after the second failure")
    await settle()
    assert sink.replaces == []
    clock.step(1.6)
    await until(lambda: sink.replaces, message="the list after two failures")
    assert sink.replaces == [(["a", "b"], "2")]
