"""Waiting for a condition with a deadline, the one way tests wait."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["eventually", "eventually_sync"]

T = TypeVar("T")


async def eventually(check: Callable[[], Awaitable[T | None]], *, timeout: float = 10.0, interval: float = 0.1,
                     message: str = "") -> T:
    """Call `check` until it returns a truthy value (returned) or the deadline passes.

    `check` may return None for "not yet", so the result's type excludes it.

    An exception from `check` counts as "not yet"; at the deadline the last one is chained
    into the AssertionError so the failure says what was last seen.
    """
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    result: T | None = None
    while time.monotonic() < deadline:
        try:
            result = await check()
            if result:
                return result
        except AssertionError as e:
            last = e
        except Exception as e:  # noqa: BLE001 - a failing probe is "not yet"
            last = e
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s: {message} (last: {result!r})") from last


def eventually_sync(check: Callable[[], T | None], *, timeout: float = 10.0, interval: float = 0.1,
                    message: str = "") -> T:
    """The blocking twin of `eventually`, for tests that drive subprocesses."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    result: T | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception as e:  # noqa: BLE001
            last = e
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s: {message} (last: {result!r})") from last
