"""The fake clock: sleepers and timeouts follow `step()`, never real time."""

from __future__ import annotations

import asyncio

import pytest

from kube.clock import FakeClock, RealClock
from tests.kube.waiting import settle


async def test_sleepers_wake_when_their_deadline_is_stepped_past() -> None:
    clock = FakeClock(100.0)
    woke: list[float] = []

    async def sleeper(seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(clock.now())

    tasks = [asyncio.create_task(sleeper(s)) for s in (1.0, 3.0)]
    await settle()
    assert clock.waiters() == 2
    clock.step(0.5)
    await settle()
    assert woke == []
    clock.step(0.5)
    await settle()
    assert woke == [101.0]
    clock.step(5.0)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert woke == [101.0, 106.0]
    assert not clock.has_waiters()


async def test_a_timeout_fires_at_its_fake_deadline() -> None:
    clock = FakeClock()

    async def hang() -> None:
        async with clock.timeout(2.0):
            await asyncio.Event().wait()

    task = asyncio.create_task(hang())
    await settle()
    clock.step(1.9)
    await settle()
    assert not task.done()
    clock.step(0.1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(task, 5)


async def test_a_body_that_finishes_in_time_is_left_alone() -> None:
    clock = FakeClock()
    async with clock.timeout(1.0):
        await asyncio.sleep(0)
    clock.step(5.0)  # the expired deadline must not cancel whatever runs next
    await settle()
    await asyncio.sleep(0)
    assert not clock.has_waiters()


async def test_a_zero_timeout_expires_at_once() -> None:
    clock = FakeClock()
    with pytest.raises(TimeoutError):
        async with clock.timeout(0):
            await asyncio.Event().wait()


async def test_an_outer_cancellation_is_not_turned_into_a_timeout() -> None:
    clock = FakeClock()

    async def hang() -> None:
        async with clock.timeout(10.0):
            await asyncio.Event().wait()

    task = asyncio.create_task(hang())
    await settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_real_clock_times_out_too() -> None:
    clock = RealClock()
    with pytest.raises(TimeoutError):
        async with clock.timeout(0.01):
            await asyncio.Event().wait()
    before = clock.now()
    await clock.sleep(0)
    assert clock.now() >= before
