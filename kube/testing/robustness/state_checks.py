"""The cluster's guarantees beyond watch: durable writes, fresh LISTs, sane pods, a consistent cache.

Each check is a pure function over recorded values returning its violations (empty when the
property holds). Mirrors etcd's `validate/operations.go` (every acknowledged write is in the
history) and kube-apiserver's cache consistency detector (a digest of name and
resourceVersion pairs from the watch cache and from etcd at the same revision).
"""

from __future__ import annotations

import hashlib
import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kube.testing.robustness.history import BOOKMARK, ListObservation, ObservedEvent, WatchHistory, Write

__all__ = ["check_writes", "check_revisions_increase", "check_lists_not_stale", "check_pods",
           "list_digest", "check_cache_consistent"]


def check_writes(writes: Sequence[Write], final: Mapping[str, tuple[str, int]],
                 reference: Sequence[ObservedEvent] = (), *, reference_start: int = 0,
                 late_unacknowledged: bool = False) -> list[str]:
    """Every acknowledged write is durable: in etcd's history as written, and not lost in the end.

    `final` maps each key to its (value, revision) read after the run. The last
    acknowledged write of a key must be what is stored, unless a later attempt (acknowledged
    or not: an unanswered write may still have happened) replaced it. With
    `late_unacknowledged`, any unanswered attempt may have replaced it, also an earlier one:
    with several API servers, a request the client gave up on while its server was stopped
    can be applied once that server resumes, after later writes through another server.
    """
    out: list[str] = []
    in_history = {(e.key, e.revision): e.value for e in reference if e.type != BOOKMARK}
    by_key: dict[str, list[Write]] = defaultdict(list)
    for w in writes:
        by_key[w.key].append(w)
        if w.acknowledged and w.revision > reference_start and in_history.get((w.key, w.revision)) != w.value:
            out.append(f"write {w.key}={w.value}@{w.revision} acknowledged but not in etcd's history")
    for key, attempts in by_key.items():
        acked = [w for w in attempts if w.acknowledged]
        if not acked:
            continue
        last = max(acked, key=lambda w: w.seq)
        allowed = {w.value for w in attempts
                   if w.seq >= last.seq or (late_unacknowledged and not w.acknowledged)}
        stored = final.get(key)
        if stored is None:
            out.append(f"write {key}={last.value}@{last.revision} acknowledged, the key is gone")
        elif stored[0] not in allowed or stored[1] < last.revision:
            out.append(f"write {key}={last.value}@{last.revision} acknowledged, stored {stored[0]}@{stored[1]}")
    return out


def check_revisions_increase(name: str, revisions: Sequence[int]) -> list[str]:
    """A sequence of resourceVersions one client saw, in the order it saw them, never goes back."""
    return [f"{name}: resourceVersion {b} after {a}" for a, b in itertools.pairwise(revisions) if b < a]


def check_lists_not_stale(lists: Sequence[ListObservation]) -> list[str]:
    """Successive consistent LISTs never return an older state: neither the list nor any item goes back."""
    out = check_revisions_increase("LIST", [obs.revision for obs in lists])
    newest: dict[str, int] = {}
    for obs in lists:
        for key, rev in obs.items:
            if rev < newest.get(key, 0):
                out.append(f"LIST at {obs.revision}: {key}@{rev} older than {key}@{newest[key]} listed before")
            newest[key] = max(rev, newest.get(key, 0))
    return out


def _replay(history: WatchHistory) -> Iterable[dict[str, ObservedEvent]]:
    """The pods each segment knew after each event (a relist starts over from its LIST)."""
    for seg in history.segments:
        state = {e.key: e for e in seg.initial}
        yield dict(state)
        for e in seg.events:
            if e.type == BOOKMARK:
                continue
            if e.type == "DELETED":
                state.pop(e.key, None)
            else:
                state[e.key] = e
            yield state


def check_pods(pods: WatchHistory, *, capacity: Mapping[str, int], max_replicas: Mapping[str, int]) -> list[str]:
    """No pod ever moves between nodes, no node ever holds more pods than its capacity, no ReplicaSet overshoots.

    `pods` is a watch history of pods; `capacity` the pods each node admits; `max_replicas`
    the largest `spec.replicas` each ReplicaSet (`namespace/name`, as pods name their owner)
    ever had. A pod counts against its node until it is gone or terminal, and against its
    ReplicaSet until it is deleting or terminal.
    """
    out: set[str] = set()
    bound: dict[str, str] = {}
    for state in _replay(pods):
        per_node: dict[str, int] = defaultdict(int)
        per_owner: dict[str, list[str]] = defaultdict(list)
        for key, pod in state.items():
            if pod.node_name:
                first = bound.setdefault(pod.uid or key, pod.node_name)
                if first != pod.node_name:
                    out.add(f"pod {key} bound to {first}, later to {pod.node_name}")
                if not pod.terminal:
                    per_node[pod.node_name] += 1
            if pod.owner and not pod.terminal and not pod.deleting:
                per_owner[pod.owner].append(key)
        out.update(f"node {n} holds {c} pods, capacity {capacity[n]}" for n, c in per_node.items()
                   if n in capacity and c > capacity[n])
        out.update(f"ReplicaSet {o} has {len(ks)} live pods, at most {max_replicas[o]} wanted: {sorted(ks)}"
                   for o, ks in per_owner.items() if o in max_replicas and len(ks) > max_replicas[o])
    return sorted(out)


def list_digest(items: Iterable[tuple[str, int]]) -> str:
    """The consistency detector's digest: a hash of the sorted (key, resourceVersion) pairs."""
    h = hashlib.sha256()
    for key, rev in sorted(items):
        h.update(f"{key}/{rev}\n".encode())
    return h.hexdigest()


def check_cache_consistent(cached: ListObservation, stored: ListObservation) -> list[str]:
    """A LIST served by the watch cache equals etcd's contents at the same revision."""
    if cached.revision != stored.revision:
        return [f"compared LISTs at different revisions: {cached.revision} and {stored.revision}"]
    if list_digest(cached.items) == list_digest(stored.items):
        return []
    a, b = set(cached.items), set(stored.items)
    return [f"{cached.source or 'cache'} at {cached.revision} differs from {stored.source or 'etcd'}: "
            f"only in cache {sorted(a - b)[:5]}, only in etcd {sorted(b - a)[:5]}"]
