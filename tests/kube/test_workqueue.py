"""The work queue's client-go semantics: dedup, dirty/processing, delayed and rate-limited adds, shutdown."""

from __future__ import annotations

import asyncio

import pytest

from kube.clock import FakeClock
from kube.workqueue import ItemExponentialFailureRateLimiter, ShutDown, WorkQueue
from tests.kube.waiting import settle, until


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> WorkQueue[str]:
    return WorkQueue(name="test", clock=clock)


async def test_add_dedups_waiting_items_and_keeps_fifo_order(queue: WorkQueue[str]) -> None:
    for key in ("a", "b", "a", "c", "b"):
        queue.add(key)
    assert len(queue) == 3
    assert [await queue.get() for _ in range(3)] == ["a", "b", "c"]


async def test_an_item_re_added_while_processing_waits_for_done(queue: WorkQueue[str]) -> None:
    queue.add("a")
    assert await queue.get() == "a"
    assert queue.is_processing("a")
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0  # parked as dirty, not handed to another worker
    queue.done("a")
    assert len(queue) == 1
    assert await queue.get() == "a"


async def test_done_without_a_re_add_forgets_the_item(queue: WorkQueue[str]) -> None:
    queue.add("a")
    await queue.get()
    queue.done("a")
    assert len(queue) == 0
    assert not queue.is_processing("a")


async def test_a_second_done_does_not_queue_the_item_twice(queue: WorkQueue[str]) -> None:
    queue.add("a")
    await queue.get()
    queue.add("a")
    queue.done("a")
    queue.done("a")  # a buggy caller: must not put "a" in the queue a second time
    assert len(queue) == 1
    assert await queue.get() == "a"
    assert len(queue) == 0


async def test_get_waits_for_an_add(queue: WorkQueue[str]) -> None:
    getter = asyncio.create_task(queue.get())
    await settle()
    assert not getter.done()
    queue.add("a")
    assert await asyncio.wait_for(getter, 5) == "a"


async def test_each_add_wakes_one_of_many_waiting_workers(queue: WorkQueue[str]) -> None:
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await settle()
    queue.add("a")
    queue.add("b")
    await until(lambda: sum(g.done() for g in getters) == 2, message="two workers served")
    await settle()
    assert sorted(g.result() for g in getters if g.done()) == ["a", "b"]
    queue.add("c")
    assert await asyncio.wait_for(asyncio.gather(*getters), 5) is not None


async def test_a_cancelled_waiter_passes_its_wake_up_on(queue: WorkQueue[str]) -> None:
    first, second = asyncio.create_task(queue.get()), asyncio.create_task(queue.get())
    await settle()
    queue.add("a")
    first.cancel()  # woken for "a" but cancelled before it ran
    assert await asyncio.wait_for(second, 5) == "a"


async def test_add_after_uses_the_clock(queue: WorkQueue[str], clock: FakeClock) -> None:
    queue.add_after("a", 2.0)
    queue.add_after("b", 0)  # no delay: now
    assert len(queue) == 1
    await settle()
    clock.step(1.9)
    await settle()
    assert len(queue) == 1
    clock.step(0.1)
    await until(lambda: len(queue) == 2, message="the delayed add")
    assert [await queue.get(), await queue.get()] == ["b", "a"]


async def test_rate_limited_adds_back_off_per_item_and_forget_resets(clock: FakeClock) -> None:
    queue: WorkQueue[str] = WorkQueue(clock=clock, rate_limiter=ItemExponentialFailureRateLimiter(0.005, 1000.0))
    waits = []
    for _ in range(3):
        queue.add_rate_limited("a")
        await settle()
        start = clock.now()
        while not len(queue):
            clock.step(0.001)
            await settle()
        waits.append(clock.now() - start)
        assert await queue.get() == "a"
        queue.done("a")
    assert waits == pytest.approx([0.005, 0.010, 0.020], abs=0.0011)
    assert queue.num_requeues("a") == 3
    assert queue.num_requeues("b") == 0
    queue.forget("a")
    assert queue.num_requeues("a") == 0


async def test_shut_down_releases_waiters_refuses_adds_and_drops_delayed_ones(queue: WorkQueue[str],
                                                                             clock: FakeClock) -> None:
    getter = asyncio.create_task(queue.get())
    queue.add_after("late", 1.0)
    await settle()
    await queue.shut_down()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 5)
    queue.add("a")
    assert len(queue) == 0
    clock.step(5.0)
    await settle()
    assert len(queue) == 0
    with pytest.raises(ShutDown):
        await queue.get()
    assert queue.shutting_down()
