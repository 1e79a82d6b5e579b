"""The informer handlers: what is pending, what the cache counts, what retries unschedulable pods."""

from __future__ import annotations

import asyncio

import pytest

from kube.api import Pod
from kube.clock import FakeClock
from scheduler.cache import SchedulerCache
from scheduler.event_handlers import ClusterEventHandlers, is_pending_for, node_scheduling_properties_changed
from scheduler.queue import SchedulingQueue
from tests.scheduler.builders import make_node, make_pod


@pytest.mark.parametrize(("pod", "pending"), [
    (make_pod().obj(), True),
    (make_pod().scheduler_name("default-scheduler").obj(), True),
    (make_pod().scheduler_name("other").obj(), False),
    (make_pod().node("n1").obj(), False),
    (make_pod().terminating().obj(), False),
    (make_pod().phase("Succeeded").obj(), False),
    (make_pod().phase("Failed").obj(), False),
    (make_pod().phase("Pending").obj(), True),
], ids=["plain", "named", "other-scheduler", "bound", "terminating", "succeeded", "failed", "phase-pending"])
def test_is_pending_for(pod: Pod, pending: bool) -> None:
    assert is_pending_for(pod, "default-scheduler") is pending


def test_heartbeats_are_not_scheduling_changes() -> None:
    node = make_node().name("n").obj()
    beat = node.model_copy(deep=True)
    assert beat.status.conditions is not None
    beat.status.conditions[0].last_heartbeat_time = "2024-01-01T00:00:10Z"
    assert not node_scheduling_properties_changed(node, beat)
    assert node_scheduling_properties_changed(node, make_node().name("n").not_ready().obj())
    assert node_scheduling_properties_changed(node, make_node().name("n").unschedulable().obj())
    assert node_scheduling_properties_changed(node, make_node().name("n").capacity(cpu="8").obj())
    assert node_scheduling_properties_changed(node, make_node().name("n").label("zone", "a").obj())


async def pop_all(queue: SchedulingQueue) -> list[str]:
    keys: list[str] = []
    while len(queue):
        key = await queue.pop()
        queue.done(key)
        keys.append(key)
    return keys


async def test_handlers_feed_queue_and_cache() -> None:
    clock = FakeClock()
    cache, queue = SchedulerCache(), SchedulingQueue(clock=clock)
    h = ClusterEventHandlers(cache=cache, queue=queue, scheduler_name="default-scheduler")
    h.on_node_add(make_node().name("n1").obj())
    pending = make_pod().name("p").req(cpu="100m").obj()
    h.on_pod_add(pending)
    h.on_pod_add(make_pod().name("theirs").scheduler_name("other").obj())
    h.on_pod_add(make_pod().name("running").node("n1").req(cpu="200m").obj())
    assert await pop_all(queue) == ["default/p"]
    info = cache.node_info("n1")
    assert info is not None and info.requested.milli_cpu == 200

    # Unschedulable: our own status write does not bypass the backoff, a spec change does.
    queue.add_unschedulable("default/p")
    with_status = pending.model_copy(deep=True)
    with_status.status.message = "changed"
    h.on_pod_update(pending, with_status)
    assert len(queue) == 0
    labelled = with_status.model_copy(deep=True)
    labelled.metadata.labels = {"a": "b"}
    h.on_pod_update(with_status, labelled)
    assert await pop_all(queue) == ["default/p"]

    # Room freed by a deleted pod retries the unschedulable pod at once.
    h.on_pod_delete(make_pod().name("running").node("n1").obj())
    assert await pop_all(queue) == ["default/p"]
    assert info.requested.milli_cpu == 0

    # Bound: forgotten by the queue, counted by the cache.
    bound = labelled.model_copy(deep=True)
    bound.spec.node_name = "n1"
    h.on_pod_update(labelled, bound)
    assert not queue.is_unschedulable("default/p")
    assert info.requested.milli_cpu == 100
    h.on_node_add(make_node().name("n2").obj())  # nothing unschedulable left to retry
    assert len(queue) == 0


async def test_unschedulable_pods_retry_after_backoff() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(initial_backoff=1.0, max_backoff=10.0, clock=clock)
    queue.add_unschedulable("default/p")
    await asyncio.sleep(0)
    assert len(queue) == 0
    clock.step(1.0)
    await asyncio.sleep(0)
    assert await pop_all(queue) == ["default/p"]
    queue.add_unschedulable("default/p")  # second failure: 2 s
    await asyncio.sleep(0)
    clock.step(1.0)
    await asyncio.sleep(0)
    assert len(queue) == 0
    clock.step(1.0)
    await asyncio.sleep(0)
    assert await pop_all(queue) == ["default/p"]
    queue.forget("default/p")
    assert queue.num_attempts("default/p") == 0
    await queue.shut_down()


async def test_higher_priority_pods_pop_first_then_oldest() -> None:
    queue = SchedulingQueue(clock=FakeClock())
    queue.add("default/low-old", 0)
    queue.add("default/high", 1000)
    queue.add("default/low-new", 0)
    queue.add("default/mid", 10)
    assert await pop_all(queue) == ["default/high", "default/mid", "default/low-old", "default/low-new"]


async def test_a_key_added_while_processing_waits_for_done() -> None:
    queue = SchedulingQueue(clock=FakeClock())
    queue.add("default/p")
    key = await queue.pop()
    queue.add("default/p")
    assert len(queue) == 0
    queue.done(key)
    assert await pop_all(queue) == ["default/p"]
