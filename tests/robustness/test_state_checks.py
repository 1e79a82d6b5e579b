"""The state checks hold on correct histories and fail on each broken property."""

from __future__ import annotations

from kube.testing.robustness.history import ListObservation, ObservedEvent, WatchHistory, WatchSegment, Write
from kube.testing.robustness.state_checks import (
    check_cache_consistent,
    check_lists_not_stale,
    check_pods,
    check_revisions_increase,
    check_writes,
    list_digest,
)

WRITES = [Write("ns/a", "1", 1, 11), Write("ns/a", "2", 2, 13), Write("ns/a", "3", 3, 0), Write("ns/b", "1", 4, 12)]
REFERENCE = [ObservedEvent("ADDED", "ns/a", 11, value="1"), ObservedEvent("ADDED", "ns/b", 12, value="1"),
             ObservedEvent("MODIFIED", "ns/a", 13, value="2")]


def test_acknowledged_writes_survive() -> None:
    assert check_writes(WRITES, {"ns/a": ("2", 13), "ns/b": ("1", 12)}, REFERENCE, reference_start=10) == []


def test_an_unacknowledged_write_may_have_happened() -> None:
    assert check_writes(WRITES, {"ns/a": ("3", 14), "ns/b": ("1", 12)}, REFERENCE, reference_start=10) == []


def test_a_lost_write_fails() -> None:
    assert check_writes(WRITES, {"ns/a": ("1", 11), "ns/b": ("1", 12)}, REFERENCE, reference_start=10)
    assert check_writes(WRITES, {"ns/a": ("2", 13)}, REFERENCE, reference_start=10)


def test_an_acknowledged_write_missing_from_etcds_history_fails() -> None:
    assert check_writes(WRITES, {"ns/a": ("2", 13), "ns/b": ("1", 12)}, REFERENCE[:2], reference_start=10)
    assert check_writes(WRITES, {"ns/a": ("2", 13), "ns/b": ("1", 12)}, REFERENCE[:2], reference_start=13) == []


def test_revisions_and_lists_never_go_back() -> None:
    assert check_revisions_increase("w", [1, 2, 2, 5]) == []
    assert check_revisions_increase("w", [1, 5, 4])
    ok = [ListObservation(10, (("ns/a", 9),)), ListObservation(12, (("ns/a", 11),))]
    assert check_lists_not_stale(ok) == []
    assert check_lists_not_stale(ok[::-1])
    assert check_lists_not_stale([ListObservation(12, (("ns/a", 11),)), ListObservation(12, (("ns/a", 9),))])


def pod(rev: int, key: str, node: str = "", owner: str = "rs", type_: str = "MODIFIED", *, terminal: bool = False,
        deleting: bool = False) -> ObservedEvent:
    return ObservedEvent(type_, key, rev, uid=key, node_name=node, owner=owner, terminal=terminal, deleting=deleting)


def pods(*events: ObservedEvent) -> WatchHistory:
    return WatchHistory("pods", [WatchSegment(1, events=list(events))])


def test_pods_that_stay_put_within_capacity_pass() -> None:
    h = pods(pod(2, "a", type_="ADDED"), pod(3, "a", "n1"), pod(4, "b", "n1", type_="ADDED"),
             pod(5, "a", "n1", deleting=True), pod(6, "c", "n1", type_="ADDED"), pod(7, "a", "n1", type_="DELETED"))
    assert check_pods(h, capacity={"n1": 3}, max_replicas={"rs": 2}) == []


def test_a_pod_moving_node_fails() -> None:
    assert check_pods(pods(pod(2, "a", "n1"), pod(3, "a", "n2")), capacity={}, max_replicas={})


def test_a_node_over_capacity_fails_but_terminal_pods_do_not_count() -> None:
    h = pods(pod(2, "a", "n1"), pod(3, "b", "n1"))
    assert check_pods(h, capacity={"n1": 1}, max_replicas={})
    h = pods(pod(2, "a", "n1", terminal=True), pod(3, "b", "n1"))
    assert check_pods(h, capacity={"n1": 1}, max_replicas={}) == []


def test_a_replicaset_overshooting_fails() -> None:
    assert check_pods(pods(pod(2, "a"), pod(3, "b")), capacity={}, max_replicas={"rs": 1})


def test_a_relist_replaces_what_a_pod_watcher_knew() -> None:
    h = WatchHistory("pods", [WatchSegment(1, events=[pod(2, "a", "n1")]),
                              WatchSegment(5, initial=[pod(4, "b", "n1")], events=[])])
    assert check_pods(h, capacity={"n1": 1}, max_replicas={}) == []


def test_the_cache_must_equal_etcd() -> None:
    cached = ListObservation(20, (("ns/a", 11), ("ns/b", 12)))
    assert check_cache_consistent(cached, ListObservation(20, (("ns/b", 12), ("ns/a", 11)))) == []
    assert check_cache_consistent(cached, ListObservation(20, (("ns/a", 13), ("ns/b", 12))))
    assert check_cache_consistent(cached, ListObservation(21, cached.items))
    assert list_digest([("a", 1)]) != list_digest([("a", 2)])
