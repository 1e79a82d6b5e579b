"""The watch checks hold on a correct history and fail on each broken property."""

from __future__ import annotations

from kube.testing.robustness.history import BOOKMARK, ObservedEvent, WatchHistory, WatchSegment
from kube.testing.robustness.watch_checks import (
    check_atomic,
    check_bookmarks,
    check_ordered,
    check_reliable,
    check_resumable,
    check_unique,
    check_watch_history,
)


def ev(rev: int, key: str = "ns/a", type_: str = "MODIFIED") -> ObservedEvent:
    return ObservedEvent(type=type_, key=key, revision=rev)


REFERENCE = [ev(11, "ns/a", "ADDED"), ev(12, "ns/b", "ADDED"), ev(13), ev(14, "ns/b"), ev(15, "ns/a", "DELETED")]


def history(*events: ObservedEvent, start: int = 10) -> WatchHistory:
    return WatchHistory("w", [WatchSegment(start_revision=start, events=list(events))])


def test_a_faithful_history_passes_every_check() -> None:
    h = history(*REFERENCE[:3], ev(13, type_=BOOKMARK), *REFERENCE[3:])
    assert check_watch_history(h, REFERENCE, reference_start=10) == []


def test_a_relist_starts_a_segment_compared_on_its_own() -> None:
    h = WatchHistory("w", [WatchSegment(10, events=REFERENCE[:2]), WatchSegment(13, events=REFERENCE[3:])])
    assert check_watch_history(h, REFERENCE, reference_start=10) == []


def test_ordered_fails_when_a_revision_goes_back() -> None:
    assert check_ordered(history(REFERENCE[0], REFERENCE[2], REFERENCE[1]))
    assert check_ordered(history(ev(9), start=10)), "an event at or before the start is out of order"


def test_unique_fails_on_a_duplicate_even_across_segments() -> None:
    assert check_unique(history(REFERENCE[0], REFERENCE[0]))
    h = WatchHistory("w", [WatchSegment(10, events=[REFERENCE[0]]), WatchSegment(10, events=[REFERENCE[0]])])
    assert check_unique(h)


def test_atomic_fails_when_a_revision_is_split() -> None:
    reference = [ev(11, "ns/a"), ev(11, "ns/b")]
    assert check_atomic(history(ev(11, "ns/a")), reference)
    assert check_atomic(history(ev(11, "ns/a"), ev(11, "ns/b")), reference) == []


def test_reliable_fails_on_a_gap_or_an_invented_event() -> None:
    assert check_reliable(history(REFERENCE[0], REFERENCE[2]), REFERENCE, reference_start=10)
    assert check_reliable(history(REFERENCE[0], ev(12, "ns/zzz")), REFERENCE, reference_start=10)
    assert check_reliable(history(REFERENCE[0], ev(12, "ns/b", "MODIFIED")), REFERENCE, reference_start=10)


def test_reliable_only_compares_what_the_reference_covers() -> None:
    assert check_reliable(history(ev(8), *REFERENCE, start=5), REFERENCE, reference_start=10) == []


def test_resumable_fails_when_a_resumed_watch_skips_or_repeats() -> None:
    assert check_resumable({12: REFERENCE[2:]}, REFERENCE, reference_start=10) == []
    assert check_resumable({12: REFERENCE[3:]}, REFERENCE, reference_start=10)
    assert check_resumable({12: REFERENCE[1:]}, REFERENCE, reference_start=10)


def test_bookmarks_fail_when_behind_an_event_or_followed_by_an_older_one() -> None:
    assert check_bookmarks(history(ev(13), ev(12, type_=BOOKMARK)))
    assert check_bookmarks(history(ev(14, type_=BOOKMARK), ev(13)))
    assert check_bookmarks(history(ev(13), ev(13, type_=BOOKMARK), ev(14))) == []
