"""`picokube chaos`: the robustness suite's runs against a cluster that `picokube up` started.

Shares everything with `tests/robustness/` (kube.testing.robustness): each run injects
SIGKILL/SIGSTOP faults into the cluster's processes under load, then checks the recorded
histories and prints one summary line. The exit code says whether every check held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from kube.testing.robustness.runner import DEFAULT_COMPONENTS, RunConfig, run_once

__all__ = ["chaos"]


def chaos(*, data_dir: Path, seed: int, runs: int, duration: float, faults: int,
          components: Sequence[str] = DEFAULT_COMPONENTS, log: Callable[[str], None] = print) -> bool:
    """Run `runs` runs (seeds `seed`, `seed+1`, ...); True when no check found a violation.

    Each run creates its own namespace `chaos-<seed>`, so a seed is used once per cluster.
    """
    ok = True
    for i in range(runs):
        config = RunConfig(data_dir, seed=seed + i, duration=duration, faults=faults, components=tuple(components))
        report = asyncio.run(run_once(config, log=log))
        for violation in report.violations:
            log(f"  violation: {violation}")
        ok = ok and not report.violations
    return ok
