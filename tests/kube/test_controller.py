"""The worker loop: retry policy by outcome, one worker per key, and exactly one `done` per `get`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from kube.clock import FakeClock
from kube.controller import Request, Result, TerminalError, run_workers, split_key
from kube.errors import Conflict
from kube.workqueue import WorkQueue
from tests.kube.waiting import settle, until

Reconcile = Callable[[Request], Awaitable[Result | None]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> WorkQueue[str]:
    return WorkQueue(name="test", clock=clock)


@pytest.fixture
async def workers(queue: WorkQueue[str]) -> AsyncIterator[Callable[[Reconcile, int], asyncio.Task[None]]]:
    tasks: list[asyncio.Task[None]] = []

    def start(reconcile: Reconcile, n: int = 1) -> asyncio.Task[None]:
        task = asyncio.create_task(run_workers("test", queue, reconcile, n))
        tasks.append(task)
        return task

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.parametrize(("key", "namespace", "name"), [("ns/a", "ns", "a"), ("node-1", "", "node-1")])
def test_split_key(key: str, namespace: str, name: str) -> None:
    req = split_key(key)
    assert (req.namespace, req.name, req.key) == (namespace, name, key)


async def test_success_forgets_the_backoff(queue: WorkQueue[str], workers: Callable[..., asyncio.Task[None]]) -> None:
    seen: list[Request] = []

    async def reconcile(req: Request) -> None:
        seen.append(req)

    queue.rate_limiter.when("ns/a")  # an earlier failure
    queue.add("ns/a")
    workers(reconcile)
    await until(lambda: seen, message="a reconcile")
    await settle()
    assert seen == [Request("ns", "a")]
    assert queue.num_requeues("ns/a") == 0
    assert not queue.is_processing("ns/a") and len(queue) == 0


@pytest.mark.parametrize("error", [RuntimeError("boom"), Conflict("the object has been modified")])
async def test_a_failure_is_requeued_with_backoff(queue: WorkQueue[str], clock: FakeClock,
                                                  workers: Callable[..., asyncio.Task[None]],
                                                  error: Exception) -> None:
    calls = 0

    async def reconcile(req: Request) -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise error

    queue.add("ns/a")
    workers(reconcile)
    await until(lambda: calls == 1, message="the first attempt")
    await settle()
    assert queue.num_requeues("ns/a") == 1
    clock.step(0.004)
    await settle()
    assert calls == 1  # still backing off (5 ms)
    clock.step(0.001)
    await until(lambda: calls == 2, message="the retry after 5 ms")
    await settle()
    clock.step(0.010)
    await until(lambda: calls == 3, message="the retry after 10 ms")
    await settle()
    assert queue.num_requeues("ns/a") == 0  # the success forgot the failures


async def test_a_terminal_error_is_not_retried(queue: WorkQueue[str], clock: FakeClock,
                                               workers: Callable[..., asyncio.Task[None]]) -> None:
    calls = 0

    async def reconcile(req: Request) -> None:
        nonlocal calls
        calls += 1
        raise TerminalError("cannot ever work")

    queue.add("ns/a")
    workers(reconcile)
    await until(lambda: calls == 1, message="the attempt")
    clock.step(2000.0)
    await settle()
    assert calls == 1
    assert queue.num_requeues("ns/a") == 0 and len(queue) == 0


async def test_requeue_after_adds_the_key_again_later(queue: WorkQueue[str], clock: FakeClock,
                                                      workers: Callable[..., asyncio.Task[None]]) -> None:
    calls = 0

    async def reconcile(req: Request) -> Result:
        nonlocal calls
        calls += 1
        return Result(requeue_after=30.0)

    queue.add("ns/a")
    workers(reconcile)
    await until(lambda: calls == 1, message="the first reconcile")
    clock.step(29.0)
    await settle()
    assert calls == 1
    clock.step(1.0)
    await until(lambda: calls == 2, message="the requeued reconcile")


async def test_one_key_is_never_reconciled_by_two_workers_at_once(queue: WorkQueue[str],
                                                                  workers: Callable[..., asyncio.Task[None]]) -> None:
    running: dict[str, int] = {}
    overlaps: list[str] = []
    calls = 0
    release = asyncio.Event()

    async def reconcile(req: Request) -> None:
        nonlocal calls
        calls += 1
        running[req.key] = running.get(req.key, 0) + 1
        if running[req.key] > 1:
            overlaps.append(req.key)
        await release.wait()
        running[req.key] -= 1

    queue.add("ns/a")
    workers(reconcile, 4)
    await until(lambda: calls == 1, message="the first reconcile")
    for _ in range(3):
        queue.add("ns/a")  # events while it is being reconciled
    await settle()
    assert calls == 1
    release.set()
    await until(lambda: calls == 2, message="exactly one more reconcile for the re-adds")
    await settle()
    assert calls == 2 and overlaps == []


async def test_a_reconcile_cancelled_mid_flight_releases_its_key_exactly_once(
        queue: WorkQueue[str], workers: Callable[..., asyncio.Task[None]]) -> None:
    started = asyncio.Event()

    async def hang(req: Request) -> None:
        started.set()
        await asyncio.Event().wait()

    queue.add("ns/a")
    task = workers(hang)
    await until(started.is_set, message="the reconcile to start")
    queue.add("ns/a")  # re-added while processing
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    assert not queue.is_processing("ns/a")
    assert len(queue) == 1  # a second `done` used to queue it twice

    running = 0
    overlapped = False
    calls = 0

    async def count(req: Request) -> None:
        nonlocal running, overlapped, calls
        calls += 1
        running += 1
        overlapped = overlapped or running > 1
        await asyncio.sleep(0)
        running -= 1

    workers(count, 2)
    await until(lambda: calls >= 1, message="the released key reconciled again")
    await settle()
    assert calls == 1 and not overlapped


async def test_workers_return_when_the_queue_shuts_down(queue: WorkQueue[str],
                                                        workers: Callable[..., asyncio.Task[None]]) -> None:
    async def noop(req: Request) -> None:
        return None

    task = workers(noop, 3)
    await settle()
    await queue.shut_down()
    await asyncio.wait_for(task, 5)
