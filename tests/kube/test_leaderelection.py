"""Leader election on a Lease served in-process, on a fake clock: never two leaders, takeover, release."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import pytest

from kube.client import ClientConfig, RESTClient
from kube.clock import FakeClock
from kube.leaderelection import LeaderElector, LeadershipLost
from tests.kube.inprocess_api import InProcessApi
from tests.kube.waiting import advance

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/controller"
DURATIONS = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}


@pytest.mark.parametrize(("lease", "renew", "retry", "message"), [
    (10.0, 10.0, 2.0, "lease_duration .* must be greater than renew_deadline"),
    (8.0, 10.0, 2.0, "lease_duration .* must be greater than renew_deadline"),
    (15.0, 2.4, 2.0, r"renew_deadline .* must be greater than retry_period \* 1.2"),
    (15.0, 10.0, 0.0, "retry_period must be greater than zero"),
    (15.0, 0.0, 2.0, "renew_deadline must be greater than zero"),
    (-1.0, 10.0, 2.0, "lease_duration must be greater than zero"),
])
def test_durations_that_cannot_keep_leaders_apart_are_refused(lease: float, renew: float, retry: float,
                                                               message: str) -> None:
    client = RESTClient(ClientConfig(server="http://api.test"))
    with pytest.raises(ValueError, match=message):
        LeaderElector(client, namespace="kube-system", name="controller", identity="a", lease_duration=lease,
                      renew_deadline=renew, retry_period=retry)


@dataclass
class Candidate:
    """One process competing for the lease; `delay` slows its requests down (fake seconds)."""

    identity: str
    clock: FakeClock
    delay: float = 0.0
    delay_methods: tuple[str, ...] = ("GET", "PUT", "POST")
    delay_where: str = "before"
    down: bool = False
    terms: list[list[float]] = field(default_factory=list)
    writes: list[float] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    @property
    def leading(self) -> bool:
        return bool(self.terms) and len(self.terms[-1]) == 1

    async def _before(self, request: httpx.Request) -> None:
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if self.delay and self.delay_where == "before" and request.method in self.delay_methods:
            await self.clock.sleep(self.delay)

    async def _after(self, request: httpx.Request) -> None:
        if request.method in ("PUT", "POST"):
            self.writes.append(self.clock.now())
        if self.delay and self.delay_where == "after" and request.method in self.delay_methods:
            await self.clock.sleep(self.delay)

    async def work(self) -> None:
        term = [self.clock.now()]
        self.terms.append(term)
        try:
            await asyncio.Event().wait()
        finally:
            term.append(self.clock.now())

    def start(self, api: InProcessApi) -> RESTClient:
        client = RESTClient(ClientConfig(server="http://api.test"),
                            transport=api.transport(before=self._before, after=self._after))
        elector = LeaderElector(client, namespace="kube-system", name="controller", identity=self.identity,
                                clock=self.clock, **DURATIONS)
        self.task = asyncio.create_task(elector.run(self.work))
        return client


def overlaps(a: Candidate, b: Candidate, now: float) -> list[tuple[list[float], list[float]]]:
    def span(term: list[float]) -> tuple[float, float]:
        return term[0], term[1] if len(term) == 2 else now
    return [(x, y) for x in a.terms for y in b.terms
            if max(span(x)[0], span(y)[0]) < min(span(x)[1], span(y)[1])]


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[InProcessApi, FakeClock, Callable[[str], Candidate]]]:
    api, clock = InProcessApi(), FakeClock()
    candidates: list[Candidate] = []
    clients: list[RESTClient] = []

    def candidate(identity: str) -> Candidate:
        c = Candidate(identity, clock)
        candidates.append(c)
        clients.append(c.start(api))
        return c

    yield api, clock, candidate
    for c in candidates:
        c.down = True
        if c.task is not None:
            c.task.cancel()
    clock.step(100.0)  # let bounded releases time out
    await asyncio.gather(*(c.task for c in candidates if c.task is not None), return_exceptions=True)
    for client in clients:
        await client.close()


@pytest.mark.parametrize(("where", "methods"), [
    ("before", ("GET", "PUT")),  # requests stuck on the way: nothing reaches the server
    ("after", ("PUT",)),         # renewals land, but their responses do not come back
])
async def test_two_electors_never_both_lead_when_renewals_are_delayed(
        cluster: tuple[InProcessApi, FakeClock, Callable[[str], Candidate]], where: str,
        methods: tuple[str, ...]) -> None:
    api, clock, candidate = cluster
    a = candidate("a")
    await advance(clock, 1.0)
    assert a.leading
    b = candidate("b")
    await advance(clock, 20.0)
    assert a.leading and not b.terms  # a renews in time; b waits

    a.delay, a.delay_where, a.delay_methods = 100.0, where, methods
    for _ in range(60):
        await advance(clock, 0.5)
        assert overlaps(a, b, clock.now()) == [], f"two leaders at t={clock.now()}: a={a.terms} b={b.terms}"
    assert not a.leading and b.leading  # a stepped down and b took over
    assert a.task is not None and a.task.done()
    assert isinstance(a.task.exception(), LeadershipLost)
    assert a.terms[0][1] <= b.terms[0][0]
    assert (api.get(LEASE) or {})["spec"]["holderIdentity"] == "b"


async def test_a_standby_takes_over_only_after_the_lease_expires(
        cluster: tuple[InProcessApi, FakeClock, Callable[[str], Candidate]]) -> None:
    api, clock, candidate = cluster
    a = candidate("a")
    await advance(clock, 1.0)
    b = candidate("b")
    await advance(clock, 10.0)
    assert a.leading and not b.terms

    a.down = True  # a's process is gone: no renewals, no release
    assert a.task is not None
    a.task.cancel()
    await advance(clock, 0.5)
    last_renewal = a.writes[-1]
    assert (api.get(LEASE) or {})["spec"]["holderIdentity"] == "a"

    await advance(clock, last_renewal + 15.0 - clock.now() - 0.2)
    assert not b.terms  # the lease has not expired yet from b's point of view
    await advance(clock, 4.5)  # b sees a renewal up to one retry late, and retries every 2 s
    assert b.leading
    assert last_renewal + 15.0 <= b.terms[0][0] <= last_renewal + 15.0 + 2 * 2.0 + 0.2
    spec = (api.get(LEASE) or {})["spec"]
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1


async def test_a_leader_that_is_stopped_releases_the_lease_for_a_quick_takeover(
        cluster: tuple[InProcessApi, FakeClock, Callable[[str], Candidate]]) -> None:
    api, clock, candidate = cluster
    a = candidate("a")
    await advance(clock, 1.0)
    b = candidate("b")
    await advance(clock, 5.0)
    assert a.task is not None
    a.task.cancel()
    await advance(clock, 0.5)
    assert a.terms[0][1] == pytest.approx(6.0, abs=0.11)
    assert (api.get(LEASE) or {})["spec"]["holderIdentity"] == ""
    await advance(clock, 2.5)  # b's next retry, far sooner than the 15 s lease duration
    assert b.leading
