"""What a robustness run records: the client's view of the cluster, as plain values.

Mirrors etcd's robustness `model` and `report` packages: the load records every
acknowledged write and every event its watchers saw, the checks (pure functions in
`watch_checks` and `state_checks`) read only these values. Nothing here talks to a server,
so the checks are unit-tested on histories written by hand.

Revisions are etcd revisions (a Kubernetes resourceVersion parsed as an int). Keys are
`namespace/name` (or `name` for cluster-scoped objects).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["BOOKMARK", "ObservedEvent", "WatchSegment", "WatchHistory", "Write", "ListObservation"]

BOOKMARK = "BOOKMARK"


@dataclass(frozen=True)
class ObservedEvent:
    """One watch event (or one item of the LIST a watch segment starts from), reduced to what the checks need.

    `value` is the object's payload the load cares about (a ConfigMap's `data.v`, a
    ReplicaSet's `spec.replicas`); `node_name`, `owner`, `terminal` and `deleting` describe pods.
    """

    type: str
    key: str
    revision: int
    uid: str = ""
    value: str = ""
    node_name: str = ""
    owner: str = ""
    terminal: bool = False
    deleting: bool = False


@dataclass
class WatchSegment:
    """A stretch of one watcher with no relist: the LIST it began from, then every event in order.

    A watcher resuming from its last revision after a dropped stream stays in the same
    segment (that is what resumable means); only a 410 that forces a relist starts a new one.
    """

    start_revision: int
    initial: list[ObservedEvent] = field(default_factory=list)
    events: list[ObservedEvent] = field(default_factory=list)
    resumptions: int = 0

    @property
    def last_revision(self) -> int:
        """The newest revision this segment vouches for (its last event or bookmark, else its start)."""
        return max([self.start_revision, *(e.revision for e in self.events)])


@dataclass
class WatchHistory:
    """Everything one watcher saw, segment by segment."""

    name: str
    segments: list[WatchSegment] = field(default_factory=list)

    def event_count(self) -> int:
        return sum(len(s.events) for s in self.segments)


@dataclass(frozen=True)
class Write:
    """One write the load attempted: `revision` is the answer's resourceVersion, 0 when unacknowledged.

    An unacknowledged write (timeout, dropped connection, 5xx) may or may not have happened;
    the durability check allows it either way. `seq` orders the writes of one key; `answered`
    is the monotonic time the attempt ended, so a run can say how long writes stalled.
    """

    key: str
    value: str
    seq: int
    revision: int = 0
    answered: float = 0.0

    @property
    def acknowledged(self) -> bool:
        return self.revision > 0


@dataclass(frozen=True)
class ListObservation:
    """One LIST answer: its resourceVersion and each item's key and resourceVersion."""

    revision: int
    items: tuple[tuple[str, int], ...] = ()
    source: str = ""
