"""etcd's watch guarantees, checked on recorded watch histories.

Mirrors etcd's `tests/robustness/validate/watch.go`. Each check is a pure function that
returns the violations it found (empty when the property holds), each a sentence naming
the watcher, key and revisions involved:

- ordered: within a segment, event revisions never go back;
- unique: no event (key, revision) is delivered twice;
- atomic: every revision a watcher delivers is delivered whole (all its keys);
- reliable: between its start and its last revision a segment has no gap, compared with
  the full history of the prefix read from etcd (`reference`);
- resumable: a watch started from a revision yields the reference's suffix after it;
- bookmarks: a bookmark is never behind the last event, and no event after it is older.

`reference` is etcd's history for the watched prefix, in revision order, covering the
revisions from `reference_start` (exclusive) on. A segment reaching before it is only
compared where the reference covers it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from kube.testing.robustness.history import BOOKMARK, ObservedEvent, WatchHistory, WatchSegment

__all__ = ["check_ordered", "check_unique", "check_atomic", "check_reliable", "check_resumable",
           "check_bookmarks", "check_watch_history"]


def _changes(segment: WatchSegment) -> list[ObservedEvent]:
    return [e for e in segment.events if e.type != BOOKMARK]


def _sig(e: ObservedEvent) -> tuple[str, str, int]:
    return (e.type, e.key, e.revision)


def check_ordered(history: WatchHistory) -> list[str]:
    """Event revisions never decrease within a segment, and all are after the segment's start."""
    out: list[str] = []
    for i, seg in enumerate(history.segments):
        last = seg.start_revision
        for e in _changes(seg):
            if e.revision < last or e.revision <= seg.start_revision:
                out.append(f"{history.name}[{i}]: {e.type} {e.key}@{e.revision} after revision {last}")
            last = max(last, e.revision)
    return out


def check_unique(history: WatchHistory) -> list[str]:
    """No event (key, revision) is delivered twice, across resumptions and segments alike."""
    seen: set[tuple[str, int]] = set()
    out: list[str] = []
    for seg in history.segments:
        for e in _changes(seg):
            if (e.key, e.revision) in seen:
                out.append(f"{history.name}: {e.type} {e.key}@{e.revision} delivered twice")
            seen.add((e.key, e.revision))
    return out


def _by_revision(events: Sequence[ObservedEvent]) -> dict[int, set[str]]:
    keys: dict[int, set[str]] = defaultdict(set)
    for e in events:
        keys[e.revision].add(e.key)
    return keys


def check_atomic(history: WatchHistory, reference: Sequence[ObservedEvent]) -> list[str]:
    """Every revision a segment delivers carries every key the reference changed at that revision."""
    ref = _by_revision(reference)
    out: list[str] = []
    for i, seg in enumerate(history.segments):
        for rev, keys in sorted(_by_revision(_changes(seg)).items()):
            if rev in ref and keys != ref[rev]:
                out.append(f"{history.name}[{i}]: revision {rev} delivered keys {sorted(keys)}, "
                           f"etcd changed {sorted(ref[rev])}")
    return out


def check_reliable(history: WatchHistory, reference: Sequence[ObservedEvent], *, reference_start: int) -> list[str]:
    """Each segment saw exactly the reference's events between its start and its last revision."""
    out: list[str] = []
    for i, seg in enumerate(history.segments):
        low, high = max(seg.start_revision, reference_start), seg.last_revision
        expected = [_sig(e) for e in reference if low < e.revision <= high]
        got = [_sig(e) for e in _changes(seg) if low < e.revision <= high]
        if got != expected:
            missing = sorted(set(expected) - set(got), key=lambda s: s[2])
            extra = sorted(set(got) - set(expected), key=lambda s: s[2])
            out.append(f"{history.name}[{i}]: events in ({low}, {high}] differ from etcd: "
                       f"missing {missing[:5]}, unexpected {extra[:5]}")
    return out


def check_resumable(resumed: Mapping[int, Sequence[ObservedEvent]], reference: Sequence[ObservedEvent], *,
                    reference_start: int) -> list[str]:
    """A watch started at revision r (after the run) delivered the reference's events after r, in order.

    `resumed[r]` holds the events such a watch delivered up to the reference's last revision.
    """
    out: list[str] = []
    for start, events in sorted(resumed.items()):
        if start < reference_start:
            continue
        expected = [_sig(e) for e in reference if e.revision > start]
        got = [_sig(e) for e in events if e.type != BOOKMARK]
        if got != expected:
            out.append(f"watch from {start}: {len(got)} events differ from etcd's {len(expected)} "
                       f"(first difference at {_first_difference(got, expected)})")
    return out


def _first_difference(a: list[tuple[str, str, int]], b: list[tuple[str, str, int]]) -> str:
    for x, y in zip(a, b, strict=False):
        if x != y:
            return f"{x} != {y}"
    return f"position {min(len(a), len(b))}"


def check_bookmarks(history: WatchHistory) -> list[str]:
    """A bookmark is never behind the last event before it, and no later event is older than it."""
    out: list[str] = []
    for i, seg in enumerate(history.segments):
        last_event, last_bookmark = seg.start_revision, 0
        for e in seg.events:
            if e.type == BOOKMARK:
                if e.revision < last_event:
                    out.append(f"{history.name}[{i}]: bookmark at {e.revision} behind event at {last_event}")
                last_bookmark = max(last_bookmark, e.revision)
            else:
                if e.revision <= last_bookmark:
                    out.append(f"{history.name}[{i}]: {e.key}@{e.revision} after a bookmark at {last_bookmark}")
                last_event = e.revision
    return out


def check_watch_history(history: WatchHistory, reference: Sequence[ObservedEvent], *,
                        reference_start: int) -> list[str]:
    """Every per-watcher property above, in one list."""
    return [*check_ordered(history), *check_unique(history), *check_atomic(history, reference),
            *check_reliable(history, reference, reference_start=reference_start), *check_bookmarks(history)]
