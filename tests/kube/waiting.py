"""Waiting in unit tests of the shared library: for a condition, or for the loop to go quiet.

With a FakeClock and an in-process transport nothing waits on real time or real I/O, so
"every task is blocked" means "every task waits for the fake clock (or for the test)".
`settle()` runs the loop until that is so; `until()` waits for a condition with a real
deadline and fails the test, naming what it waited for, when the deadline passes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from kube.clock import FakeClock

__all__ = ["advance", "settle", "until"]


def _runnable(loop: asyncio.AbstractEventLoop) -> int:
    # The default event loop keeps its runnable callbacks in `_ready`; when it is empty right
    # after this task resumes, every other task is blocked on a future.
    ready = getattr(loop, "_ready", None)
    return len(ready) if ready is not None else 1


async def settle(max_rounds: int = 10_000) -> None:
    """Yield until no other task of the loop is runnable; fail if that never happens."""
    loop = asyncio.get_running_loop()
    for _ in range(max_rounds):
        await asyncio.sleep(0)
        if _runnable(loop) == 0:
            return
    raise AssertionError(f"the event loop did not go quiet within {max_rounds} rounds")


async def until(check: Callable[[], object], *, timeout: float = 5.0, message: str = "") -> None:
    """Return once `check()` is truthy; raise AssertionError after `timeout` real seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s: {message}")
        await asyncio.sleep(0.001)


async def advance(clock: FakeClock, seconds: float, *, step: float = 0.1) -> None:
    """Move `clock` forward by `seconds` in `step`s, letting the loop settle after each."""
    await settle()
    remaining = seconds
    while remaining > 1e-9:
        delta = min(step, remaining)
        clock.step(delta)
        remaining -= delta
        await settle()
