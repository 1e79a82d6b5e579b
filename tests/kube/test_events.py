"""The event recorder against an in-process Events API: aggregation of repeats, drops, retries."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

import kube.events
from kube.api import Node, Pod
from kube.client import ClientConfig, RESTClient
from kube.clock import FakeClock
from kube.events import EVENT_NORMAL, EVENT_WARNING, EventRecorder
from kube.timeutil import format_time
from tests.kube.inprocess_api import Hook, InProcessApi
from tests.kube.waiting import until

EVENTS = "/api/v1/namespaces/default/events"
POD = Pod.model_validate({"metadata": {"name": "web-1", "namespace": "default", "uid": "uid-web-1",
                                       "resourceVersion": "7"}})
OTHER = Pod.model_validate({"metadata": {"name": "web-2", "namespace": "default", "uid": "uid-web-2"}})

Start = Callable[..., EventRecorder]


@pytest.fixture
def api() -> InProcessApi:
    return InProcessApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def start(api: InProcessApi, clock: FakeClock) -> AsyncIterator[Start]:
    tasks: list[asyncio.Task[None]] = []
    clients: list[RESTClient] = []
    ticks = itertools.count()

    def go(*, before: Hook | None = None, run: bool = True) -> EventRecorder:
        client = RESTClient(ClientConfig(server="http://api.test"), transport=api.transport(before=before))
        clients.append(client)
        recorder = EventRecorder(client, "test-controller", "host-1", clock=clock,
                                 now=lambda: format_time(1_700_000_000 + next(ticks)))
        if run:
            tasks.append(asyncio.create_task(recorder.run()))
        return recorder

    yield go
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for client in clients:
        await client.close()


def stored(api: InProcessApi) -> list[dict[str, Any]]:
    return sorted((o for k, o in api.objects.items() if k.resource == "events"),
                  key=lambda o: str(o["metadata"]["name"]))


async def test_an_event_is_created_with_its_object_reference_and_source(api: InProcessApi, start: Start) -> None:
    recorder = start()
    recorder.event(POD, EVENT_NORMAL, "Scheduled", "assigned to node-1")
    await asyncio.wait_for(recorder.flush(), 5)
    [event] = stored(api)
    assert event["metadata"]["name"].startswith("web-1.")
    assert event["involvedObject"] == {"apiVersion": "v1", "kind": "Pod", "name": "web-1", "namespace": "default",
                                       "uid": "uid-web-1", "resourceVersion": "7"}
    assert (event["type"], event["reason"], event["message"], event["count"]) == \
        ("Normal", "Scheduled", "assigned to node-1", 1)
    assert event["source"] == {"component": "test-controller", "host": "host-1"}
    assert event["firstTimestamp"] == event["lastTimestamp"]


async def test_repeats_are_aggregated_into_one_event_with_a_count(api: InProcessApi, start: Start) -> None:
    recorder = start()
    for _ in range(3):
        recorder.event(POD, EVENT_WARNING, "BackOff", "Back-off restarting failed container")
    await asyncio.wait_for(recorder.flush(), 5)
    [event] = stored(api)
    assert event["count"] == 3
    assert event["firstTimestamp"] == "2023-11-14T22:13:20Z"
    assert event["lastTimestamp"] == "2023-11-14T22:13:22Z"
    writes = [r.method for r in api.requests if r.method != "GET"]
    assert writes == ["POST", "PATCH", "PATCH"]


@pytest.mark.parametrize(("obj", "type_", "reason", "message"), [
    (OTHER, EVENT_WARNING, "BackOff", "Back-off"),     # another object
    (POD, EVENT_NORMAL, "BackOff", "Back-off"),        # another type
    (POD, EVENT_WARNING, "Failed", "Back-off"),        # another reason
    (POD, EVENT_WARNING, "BackOff", "Back-off again"),  # another message
])
async def test_events_that_differ_are_not_aggregated(api: InProcessApi, start: Start, obj: Pod, type_: str,
                                                     reason: str, message: str) -> None:
    recorder = start()
    recorder.event(POD, EVENT_WARNING, "BackOff", "Back-off")
    recorder.event(obj, type_, reason, message)
    await asyncio.wait_for(recorder.flush(), 5)
    assert [e["count"] for e in stored(api)] == [1, 1]


async def test_a_repeat_of_a_deleted_event_creates_it_again_keeping_the_count(api: InProcessApi,
                                                                            start: Start) -> None:
    recorder = start()
    recorder.event(POD, EVENT_WARNING, "BackOff", "Back-off")
    recorder.event(POD, EVENT_WARNING, "BackOff", "Back-off")
    await asyncio.wait_for(recorder.flush(), 5)
    [first] = stored(api)
    api.remove(f"{EVENTS}/{first['metadata']['name']}")  # expired (the event TTL)

    recorder.event(POD, EVENT_WARNING, "BackOff", "Back-off")
    await asyncio.wait_for(recorder.flush(), 5)
    [again] = stored(api)
    assert again["metadata"]["name"] != first["metadata"]["name"]
    assert again["count"] == 3
    assert again["firstTimestamp"] == first["firstTimestamp"]


async def test_events_about_cluster_scoped_objects_go_to_default(api: InProcessApi, start: Start) -> None:
    recorder = start()
    recorder.event(Node.model_validate({"metadata": {"name": "node-1", "uid": "uid-n1"}}), EVENT_NORMAL,
                   "NodeReady", "Node node-1 status is now: NodeReady")
    await asyncio.wait_for(recorder.flush(), 5)
    [event] = stored(api)
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]


async def test_unknown_types_are_dropped(api: InProcessApi, start: Start) -> None:
    recorder = start()
    recorder.event(POD, "Error", "Bad", "not a Kubernetes event type")
    await asyncio.wait_for(recorder.flush(), 5)
    assert stored(api) == []


async def test_a_full_queue_drops_new_events_instead_of_blocking(api: InProcessApi, start: Start,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kube.events, "_QUEUE_SIZE", 2)
    recorder = start(run=False)
    for i in range(4):
        recorder.event(POD, EVENT_NORMAL, "Created", f"container {i}")  # returns at once, no sender yet
    sender = asyncio.create_task(recorder.run())
    try:
        await asyncio.wait_for(recorder.flush(), 5)
    finally:
        sender.cancel()
    assert sorted(e["message"] for e in stored(api)) == ["container 0", "container 1"]


async def test_a_send_that_fails_is_retried_after_a_pause(api: InProcessApi, clock: FakeClock,
                                                                start: Start) -> None:
    failures = 2

    async def flaky(request: httpx.Request) -> None:
        nonlocal failures
        if failures:
            failures -= 1
            raise httpx.ConnectError("connection refused", request=request)

    recorder = start(before=flaky)
    recorder.event(POD, EVENT_NORMAL, "Pulled", "image pulled")
    await until(lambda: failures == 1 and clock.has_waiters(), message="the first retry wait")
    clock.step(0.5)
    await until(lambda: failures == 0 and clock.has_waiters(), message="the second retry wait")
    clock.step(1.0)
    await asyncio.wait_for(recorder.flush(), 5)
    assert [e["reason"] for e in stored(api)] == ["Pulled"]
