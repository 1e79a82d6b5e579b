"""slowStartBatch: issue many similar calls in growing batches, stopping at the first failure.

Mirrors pkg/controller/replicaset.slowStartBatch. Batches have sizes 1, 2, 4, 8, ... (from
`initial_batch`), each run concurrently; after a batch with any failure no further batch
starts. So a request that is bound to fail (quota, a bad template) costs a handful of calls
instead of hundreds, while healthy bursts still finish in O(log n) round trips.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["SLOW_START_INITIAL_BATCH", "gather_failures", "slow_start_batch"]

SLOW_START_INITIAL_BATCH = 1


async def _capture(fn: Callable[[], Awaitable[None]]) -> Exception | None:
    try:
        await fn()
    except Exception as e:  # noqa: BLE001 - collected per call; the caller decides what each means
        return e
    return None


async def gather_failures(calls: Sequence[Callable[[], Awaitable[None]]]) -> list[Exception]:
    """Run every call concurrently to completion; return the exceptions they raised."""
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(_capture(fn)) for fn in calls]
    return [err for t in tasks if (err := t.result()) is not None]


async def slow_start_batch(count: int, fn: Callable[[], Awaitable[None]], *,
                           initial_batch: int = SLOW_START_INITIAL_BATCH) -> tuple[int, list[Exception]]:
    """Call `fn` up to `count` times; return (successes, the failures of the last batch run).

    Calls never attempted are `count - successes - len(failures)`. Cancellation propagates.
    """
    successes, remaining, batch = 0, count, min(count, max(1, initial_batch))
    while batch > 0:
        failures = await gather_failures([fn] * batch)
        successes += batch - len(failures)
        if failures:
            return successes, failures
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, []
