"""Faults for a cluster run by `picokube up`: SIGKILL and SIGSTOP (then SIGCONT) of its processes.

Mirrors etcd's robustness `failpoint` package, with process signals as the only failpoints.
`Faults.run` injects `count` faults spread over `duration` seconds, in an order drawn from
a seeded `random.Random` (so a run can be repeated from its printed seed). After a
SIGKILL it waits until the supervisor restarted the component (a new pid, alive); a
SIGSTOP lasts a bounded, random time and is always followed by SIGCONT, also when the
run is cancelled. At most one fault is in effect at a time.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

__all__ = ["Fault", "Faults", "Pids"]

Pids = Callable[[], Awaitable[dict[str, int]]]
"""The live pid of each component by name (from `picokube status -o json`)."""

KINDS = ("SIGKILL", "SIGSTOP")


@dataclass(frozen=True)
class Fault:
    at: float
    component: str
    kind: str
    pid: int
    seconds: float = 0.0

    def __str__(self) -> str:
        pause = f" for {self.seconds:.1f}s" if self.kind == "SIGSTOP" else ""
        return f"{self.at:6.1f}s {self.kind} {self.component} (pid {self.pid}){pause}"


class Faults:
    """Injects faults into `components`; `injected` lists what was done, in order."""

    def __init__(self, pids: Pids, *, components: Sequence[str], rng: random.Random, count: int, duration: float,
                 max_pause: float = 4.0, restart_timeout: float = 60.0) -> None:
        self.pids, self.components, self.rng = pids, list(components), rng
        self.count, self.duration, self.max_pause, self.restart_timeout = count, duration, max_pause, restart_timeout
        self.injected: list[Fault] = []

    async def run(self) -> None:
        start = time.monotonic()
        gap = self.duration / (self.count + 1)
        for i in range(self.count):
            target = start + gap * (i + 1) + self.rng.uniform(-gap / 3, gap / 3)
            await asyncio.sleep(max(0.0, target - time.monotonic()))
            await self.inject(self.rng.choice(self.components), self.rng.choice(KINDS), at=time.monotonic() - start)

    async def inject(self, component: str, kind: str, *, at: float = 0.0) -> Fault:
        """Apply one fault and return once its effect is over (restarted, or resumed)."""
        pid = (await self.pids())[component]
        if kind == "SIGKILL":
            os.kill(pid, signal.SIGKILL)
            fault = Fault(at, component, kind, pid)
            self.injected.append(fault)
            await self._wait_restarted(component, pid)
            return fault
        fault = Fault(at, component, kind, pid, round(self.rng.uniform(0.5, self.max_pause), 1))
        self.injected.append(fault)
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(fault.seconds)
        finally:
            os.kill(pid, signal.SIGCONT)
        return fault

    async def _wait_restarted(self, component: str, old_pid: int) -> None:
        deadline = time.monotonic() + self.restart_timeout
        while time.monotonic() < deadline:
            try:
                if (await self.pids()).get(component, old_pid) != old_pid:
                    return
            except (OSError, ValueError, KeyError):
                pass
            await asyncio.sleep(0.3)
        raise RuntimeError(f"{component} was not restarted within {self.restart_timeout}s of its SIGKILL")
