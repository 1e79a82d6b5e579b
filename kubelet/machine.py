"""What a node running real containers has to offer: the machine's own CPU, memory and disk.

A cri node reports what `/proc` and the filesystem say, as upstream's cAdvisor-backed kubelet
does, and holds back upstream's default hard-eviction thresholds from allocatable
(`memory.available<100Mi`, `nodefs.available<10%`), so pods packed to allocatable leave the
node room to evict before it runs out. Simulated nodes report `--node-capacity` instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kube.quantity import parse_quantity

__all__ = ["MAX_PODS", "allocatable_from", "machine_capacity"]

MAX_PODS = "110"
_EVICTION_MEMORY = 100 * 1024 * 1024
_EVICTION_NODEFS_FRACTION = 0.10


def _mem_total(meminfo: Path = Path("/proc/meminfo")) -> int:
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024  # kB
    raise OSError("MemTotal missing from /proc/meminfo")


def machine_capacity(disk: str = "/") -> dict[str, str]:
    """cpu, memory, ephemeral-storage (of the filesystem holding `disk`) and pods, as quantities."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    probe = Path(disk)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return {"cpu": str(cpus), "memory": f"{_mem_total() // 1024}Ki",
            "ephemeral-storage": f"{shutil.disk_usage(probe).total // 1024}Ki", "pods": MAX_PODS}


def allocatable_from(capacity: dict[str, str]) -> dict[str, str]:
    """Capacity less the hard-eviction reserves (memory and ephemeral-storage; never below 0)."""
    out = dict(capacity)
    if "memory" in out:
        out["memory"] = f"{max(0, int(parse_quantity(out['memory'])) - _EVICTION_MEMORY) // 1024}Ki"
    if "ephemeral-storage" in out:
        total = int(parse_quantity(out["ephemeral-storage"]))
        out["ephemeral-storage"] = f"{int(total * (1 - _EVICTION_NODEFS_FRACTION)) // 1024}Ki"
    return out
