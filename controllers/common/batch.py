"""slowStartBatch: issue many similar calls in growing batches, stopping at the first failure.

Mirrors pkg/controller/replicaset.slowStartBatch. Batches have sizes 1, 2, 4, 8, ... (from
`initial_batch`), each run concurrently; after a batch with any failure no further batch
starts. So a request that is bound to fail (quota, a bad template) costs a handful of calls
instead of hundreds, while healthy bursts still finish in O(log n) round trips.

At most `MAX_IN_FLIGHT` calls of a batch run at once (upstream's are bounded by the client's
QPS limit instead): past that, requests only queue in the HTTP client's connection pool,
whose bookkeeping costs grow with the queue, and the API server gains nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["MAX_IN_FLIGHT", "SLOW_START_INITIAL_BATCH", "gather_failures", "slow_start_batch"]

SLOW_START_INITIAL_BATCH = 1
MAX_IN_FLIGHT = 32


async def _capture(fn: Callable[[], Awaitable[None]], seats: asyncio.Semaphore) -> Exception | None:
    async with seats:
        try:
            await fn()
        except Exception as e:  # noqa: BLE001 - collected per call; the caller decides what each means
            return e
    return None


async def gather_failures(calls: Sequence[Callable[[], Awaitable[None]]]) -> list[Exception]:
    """Run every call to completion, `MAX_IN_FLIGHT` at a time; return the exceptions they raised."""
    seats = asyncio.Semaphore(MAX_IN_FLIGHT)
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(_capture(fn, seats)) for fn in calls]
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
