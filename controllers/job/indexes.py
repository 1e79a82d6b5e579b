"""Completion indexes of Indexed Jobs: parsing, formatting and choosing the next ones.

Mirrors pkg/controller/job/indexed_job_utils.go. `status.completedIndexes` is a compressed
list of intervals (`1,3-5,7`); a pod's index is its `batch.kubernetes.io/job-completion-index`
annotation, and a pod without a valid one (not an integer in [0, completions)) has none.
"""

from __future__ import annotations

from collections.abc import Iterable

from kube.api import Pod
from kube.api.batch_v1 import JOB_COMPLETION_INDEX_ANNOTATION

__all__ = ["format_indexes", "parse_indexes", "pod_index", "pending_indexes"]


def pod_index(pod: Pod, completions: int) -> int | None:
    """The pod's completion index, or None when it has no valid one."""
    raw = (pod.metadata.annotations or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
    if raw is None or not raw.isdigit():
        return None
    index = int(raw)
    return index if index < completions else None


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes in `1,3-5`; intervals past `completions` and malformed parts are ignored."""
    found: set[int] = set()
    for part in (text or "").split(","):
        first, _, last = part.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            continue
        found.update(i for i in range(int(first), int(last or first) + 1) if i < completions)
    return found


def format_indexes(indexes: Iterable[int]) -> str:
    """`1,3-5,7`: sorted, consecutive runs as intervals ("" for none)."""
    runs: list[list[int]] = []
    for i in sorted(set(indexes)):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def pending_indexes(*, completions: int, completed: set[int], active: set[int], count: int) -> list[int]:
    """Up to `count` of the lowest indexes neither completed nor held by an active pod."""
    out: list[int] = []
    for i in range(completions):
        if len(out) >= count:
            break
        if i not in completed and i not in active:
            out.append(i)
    return out
