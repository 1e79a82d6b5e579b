"""The max-in-flight limit, shared fairly between users, and the budget of long-running requests.

Mirrors kube-apiserver's `WithMaxInFlightLimit` (`--max-requests-inflight`, default 400, and
`--max-mutating-requests-inflight`, default 200; 0 lifts a limit): a request that is not
long-running takes a seat of the read-only pool (verbs get, list) or of the mutating pool
(everything else) for as long as it is served, body read and response written included. With
no seat to take, the answer is 429 with `Retry-After: 1` and the message "Too many requests,
please try again later."; upstream writes that message as plain text, here it is the
`Status` client-go makes of it (reason TooManyRequests, `retryAfterSeconds: 1`), so every
client decodes it as the error it is. Members of `system:masters` are never refused (a
super-admin or the loopback must always get an answer): they take a seat when one is free and
are served without one otherwise. Health probes (`/healthz`, `/livez`, `/readyz`) take no seat,
as API Priority and Fairness exempts them, so a flood never makes a server look dead.

Fairness (in the spirit of API Priority and Fairness, kept to one rule): with n users holding
or asking for seats of a pool, each user's fair share is `limit // (n + 1)` (at least 1). A
user below its share may take any free seat; a user at or above it may take one only while a
fair share of seats stays free after it. So a user flooding the server alone holds at most half
of a pool, and a user arriving while others flood always finds seats, up to its share, as soon
as requests above the flooders' shares end; when the server is quiet a busy client still gets
most of the pool. Users are told apart by name (the impersonated user where a request
impersonates one), as APF's flow schemas distinguish flows by user.

Long-running requests (watches, exec, attach, port-forward, proxy, log; see `longrunning`) take
no seat, as upstream: they may last hours. Instead each user may hold at most
`--max-long-running-requests-per-user` of them open (default 1000, 0: no cap; not an upstream
flag): a client opening watch after watch is refused with the same 429 once it holds its cap,
so a flood of watches costs the server a bounded number of streams per user, and the other
users' requests, which take seats the watches never hold, keep being served.

Everything here runs on the server's one event loop; no method awaits, so no lock is needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NoReturn

from apiserver.authn import UserInfo
from apiserver.endpoints.request_info import RequestInfo
from apiserver.filters.longrunning import is_long_running
from apiserver.metrics import Metrics
from kube.errors import TooManyRequests

__all__ = ["InflightLimiter", "Seat", "SeatPool", "LongRunningBudget", "READ_ONLY", "MUTATING", "SYSTEM_MASTERS",
           "too_many_requests"]

READ_ONLY, MUTATING = "readOnly", "mutating"
"""The `request_kind` label values of upstream's in-flight metrics."""
SYSTEM_MASTERS = "system:masters"
_NON_MUTATING_VERBS = frozenset({"get", "list", "watch"})
_PROBES = ("/healthz", "/livez", "/readyz")
_ANONYMOUS = "system:anonymous"


def too_many_requests() -> TooManyRequests:
    """Upstream's 429 of an overloaded server, asking the client to come back in a second."""
    return TooManyRequests("Too many requests, please try again later.", details={"retryAfterSeconds": 1})


class SeatPool:
    """`limit` seats shared by users, each held by one request; see the module docstring for the rule."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: Counter[str] = Counter()
        self.in_use = 0

    def fair_share(self, user: str) -> int:
        """The seats `user` may hold whatever the others do."""
        active = len(self.held) + (0 if user in self.held else 1)
        return max(1, self.limit // (active + 1))

    def try_acquire(self, user: str, *, exempt: bool = False) -> bool:
        """Take a seat for `user` if the rule allows (`exempt`: whenever one is free); False otherwise."""
        if self.in_use >= self.limit:
            return False
        if not exempt:
            share = self.fair_share(user)
            if self.held[user] >= share and self.limit - self.in_use - 1 < share:
                return False
        self.in_use += 1
        self.held[user] += 1
        return True

    def release(self, user: str) -> None:
        """Give back a seat `try_acquire` gave `user`."""
        self.in_use -= 1
        self.held[user] -= 1
        if self.held[user] <= 0:
            del self.held[user]


class LongRunningBudget:
    """At most `per_user` open long-running requests per user (0: no cap)."""

    def __init__(self, per_user: int) -> None:
        self.per_user = per_user
        self.open: Counter[str] = Counter()

    def try_acquire(self, user: str) -> bool:
        if self.per_user and self.open[user] >= self.per_user:
            return False
        self.open[user] += 1
        return True

    def release(self, user: str) -> None:
        self.open[user] -= 1
        if self.open[user] <= 0:
            del self.open[user]


@dataclass
class Seat:
    """What one admitted request holds; `release()` gives it back (once, however often it is called)."""

    releases: list[tuple[SeatPool | LongRunningBudget, str]] = field(default_factory=list)
    limiter: InflightLimiter | None = None

    def release(self) -> None:
        while self.releases:
            holder, user = self.releases.pop()
            holder.release(user)
            if self.limiter is not None:
                self.limiter.update_gauges()


class InflightLimiter:
    """Admits requests against the two seat pools and the long-running budget, counting what it refuses."""

    def __init__(self, *, max_requests_inflight: int, max_mutating_requests_inflight: int,
                 max_long_running_per_user: int, metrics: Metrics) -> None:
        self.pools = {kind: SeatPool(limit) for kind, limit in
                      ((READ_ONLY, max_requests_inflight), (MUTATING, max_mutating_requests_inflight)) if limit > 0}
        self.long_running = LongRunningBudget(max_long_running_per_user)
        self.metrics = metrics
        self.update_gauges()

    def admit(self, info: RequestInfo, user: UserInfo | None) -> Seat:
        """The seat `info` needs for `user`, or TooManyRequests (counted as dropped); release it when done."""
        name = user.name if user is not None else _ANONYMOUS
        exempt = user is not None and SYSTEM_MASTERS in user.groups
        if is_long_running(info):
            if exempt:
                return Seat()
            if not self.long_running.try_acquire(name):
                self._dropped(READ_ONLY)
            return Seat([(self.long_running, name)])
        if info.path.startswith(_PROBES) and not info.is_resource_request:
            return Seat()
        kind = READ_ONLY if info.verb in _NON_MUTATING_VERBS else MUTATING
        pool = self.pools.get(kind)
        if pool is None:
            return Seat()
        if not pool.try_acquire(name, exempt=exempt):
            if exempt:
                return Seat()
            self._dropped(kind)
        self.update_gauges()
        return Seat([(pool, name)], limiter=self)

    def _dropped(self, kind: str) -> NoReturn:
        self.metrics.dropped_requests.labels(request_kind=kind).inc()
        raise too_many_requests()

    def update_gauges(self) -> None:
        """Set apiserver_current_inflight_requests from the pools' seats in use."""
        for kind in (READ_ONLY, MUTATING):
            pool = self.pools.get(kind)
            self.metrics.current_inflight.labels(request_kind=kind).set(pool.in_use if pool else 0)
