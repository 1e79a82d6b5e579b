"""The max-in-flight rule as a table: seat pools shared fairly, exemptions, the long-running budget, metrics."""

from __future__ import annotations

import pytest

from apiserver.authn import UserInfo
from apiserver.endpoints.request_info import RequestInfo, parse_request_info
from apiserver.filters import InflightLimiter, is_long_running
from apiserver.filters.maxinflight import SeatPool
from apiserver.filters.timeout import request_deadline
from apiserver.metrics import Metrics
from kube.errors import BadRequest, TooManyRequests

ALICE, BOB, CAROL = UserInfo("alice"), UserInfo("bob"), UserInfo("carol")
ADMIN = UserInfo("admin", groups=("system:masters",))


def take(pool: SeatPool, user: str, n: int) -> int:
    """How many of `n` seats `user` got."""
    return sum(pool.try_acquire(user) for _ in range(n))


def test_a_lone_user_holds_half_a_pool_and_a_newcomer_still_gets_seats() -> None:
    pool = SeatPool(4)
    assert take(pool, "alice", 10) == 2
    assert take(pool, "bob", 1) == 1
    assert take(pool, "carol", 1) == 1
    assert take(pool, "dave", 1) == 0  # every seat taken
    pool.release("alice")
    assert take(pool, "alice", 1) == 0  # alice is over her share of 4 // 4 and would leave no seat free


@pytest.mark.parametrize(("limit", "others", "alice_gets"), [
    (400, {}, 200),
    (400, {"bob": 5, "carol": 5}, 400 - 10 - 100),  # three users: share 100, which must stay free
    (200, {"kubelet": 2, "scheduler": 3, "proxy": 1}, 200 - 6 - 40),
])
def test_a_busy_user_takes_all_but_a_fair_share_of_a_quiet_pool(limit: int, others: dict[str, int],
                                                                alice_gets: int) -> None:
    pool = SeatPool(limit)
    for user, n in others.items():
        assert take(pool, user, n) == n
    assert take(pool, "alice", limit) == alice_gets


def test_seats_given_back_are_free_again() -> None:
    pool = SeatPool(2)
    assert take(pool, "alice", 1) == 1
    pool.release("alice")
    assert pool.in_use == 0 and not pool.held


def limiter(read: int = 2, write: int = 2, long_running: int = 2) -> InflightLimiter:
    return InflightLimiter(max_requests_inflight=read, max_mutating_requests_inflight=write,
                           max_long_running_per_user=long_running, metrics=Metrics())


def get(path: str, *, watch: bool = False) -> RequestInfo:
    return parse_request_info("GET", path, watch="true" if watch else None)


def sample(lim: InflightLimiter, name: str) -> float | None:
    return lim.metrics.registry.get_sample_value(name, {"request_kind": "mutating"})


def test_reads_and_writes_have_their_own_pools_and_refusals_are_counted() -> None:
    lim = limiter(read=2, write=2)
    post = parse_request_info("POST", "/api/v1/namespaces/a/configmaps")
    seat = lim.admit(post, ALICE)
    with pytest.raises(TooManyRequests) as refused:
        lim.admit(post, ALICE)
    assert refused.value.details == {"retryAfterSeconds": 1}
    assert str(refused.value) == "Too many requests, please try again later."
    lim.admit(parse_request_info("GET", "/api/v1/namespaces/a/configmaps"), ALICE)  # the read-only pool is apart
    assert sample(lim, "apiserver_dropped_requests_total") == 1
    assert sample(lim, "apiserver_current_inflight_requests") == 1
    seat.release()
    seat.release()  # idempotent
    assert sample(lim, "apiserver_current_inflight_requests") == 0
    lim.admit(post, ALICE)


def test_system_masters_are_never_refused() -> None:
    lim = limiter(read=1)
    lim.admit(get("/api/v1/pods"), BOB)
    for _ in range(5):
        lim.admit(get("/api/v1/pods"), ADMIN)
        lim.admit(get("/api/v1/pods", watch=True), ADMIN)


def test_probes_take_no_seat() -> None:
    lim = limiter(read=1)
    lim.admit(get("/api/v1/pods"), BOB)
    for path in ("/healthz", "/livez", "/readyz", "/readyz/etcd"):
        lim.admit(get(path), None)
    with pytest.raises(TooManyRequests):
        lim.admit(get("/version"), None)


def test_long_running_requests_take_no_seat_but_are_capped_per_user() -> None:
    lim = limiter(read=1, long_running=2)
    watches = [lim.admit(get("/api/v1/pods", watch=True), ALICE) for _ in range(2)]
    with pytest.raises(TooManyRequests):
        lim.admit(get("/api/v1/namespaces/a/pods/p/log"), ALICE)
    lim.admit(get("/api/v1/pods", watch=True), CAROL)
    lim.admit(get("/api/v1/pods"), ALICE)  # the one read-only seat was still free
    watches[0].release()
    lim.admit(get("/api/v1/namespaces/a/pods/p/log"), ALICE)


@pytest.mark.parametrize(("method", "path", "watch", "long"), [
    ("GET", "/api/v1/pods", True, True),
    ("GET", "/api/v1/namespaces/a/pods/p/log", False, True),
    ("POST", "/api/v1/namespaces/a/pods/p/exec", False, True),
    ("GET", "/api/v1/namespaces/a/pods/p/attach", False, True),
    ("POST", "/api/v1/namespaces/a/pods/p/portforward", False, True),
    ("GET", "/api/v1/namespaces/a/services/s/proxy/x", False, True),
    ("GET", "/api/v1/nodes/n/proxy/metrics", False, True),
    ("GET", "/api/v1/pods", False, False),
    ("POST", "/api/v1/namespaces/a/pods/p/eviction", False, False),
    ("GET", "/healthz", False, False),
])
def test_which_requests_are_long_running(method: str, path: str, watch: bool, long: bool) -> None:
    assert is_long_running(parse_request_info(method, path, watch="1" if watch else None)) is long


@pytest.mark.parametrize(("query", "seconds"), [
    (b"", 60.0), (b"timeout=10s", 10.0), (b"timeout=0s", 60.0), (b"timeout=2m", 60.0), (b"timeout=1.5s", 1.5),
    (b"watch=true&timeout=500ms", 0.5),
])
def test_the_deadline_is_the_server_maximum_or_a_shorter_timeout_parameter(query: bytes, seconds: float) -> None:
    assert request_deadline(query, 60.0) == seconds


def test_a_malformed_timeout_parameter_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match='invalid timeout specified in the request URL - time: invalid duration "x"'):
        request_deadline(b"timeout=x", 60.0)
