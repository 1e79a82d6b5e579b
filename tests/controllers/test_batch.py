"""slowStartBatch: 1, 2, 4, ... calls at a time, nothing more after a failing batch."""

from __future__ import annotations

import asyncio

from controllers.common.batch import gather_failures, slow_start_batch


class Recorder:
    def __init__(self, fail_from: int | None = None) -> None:
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.fail_from = fail_from

    async def call(self) -> None:
        self.calls += 1
        n = self.calls
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0)
        self.in_flight -= 1
        if self.fail_from is not None and n >= self.fail_from:
            raise RuntimeError(f"call {n}")


async def test_all_succeed_in_doubling_batches() -> None:
    rec = Recorder()
    assert await slow_start_batch(10, rec.call) == (10, [])
    assert rec.calls == 10
    assert rec.max_in_flight == 4  # batches of 1, 2, 4, then the remaining 3


async def test_stops_after_the_first_failing_batch() -> None:
    rec = Recorder(fail_from=2)  # the second call fails: batch 2 (calls 2-3) fails, batch 3 never starts
    successes, failures = await slow_start_batch(10, rec.call)
    assert rec.calls == 3
    assert successes == 1
    assert len(failures) == 2


async def test_zero_calls() -> None:
    rec = Recorder()
    assert await slow_start_batch(0, rec.call) == (0, [])
    assert rec.calls == 0


async def test_gather_failures_runs_everything() -> None:
    rec = Recorder(fail_from=3)
    failures = await gather_failures([rec.call] * 5)
    assert rec.calls == 5
    assert len(failures) == 3


async def test_a_big_batch_runs_at_most_max_in_flight_at_once() -> None:
    from controllers.common.batch import MAX_IN_FLIGHT

    rec = Recorder()
    assert await slow_start_batch(500, rec.call, initial_batch=500) == (500, [])
    assert rec.calls == 500
    assert rec.max_in_flight == MAX_IN_FLIGHT
