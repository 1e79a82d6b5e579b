"""The max-in-flight limit, its per-user fairness, the long-running budget, request deadlines and
the header read timeout, against a real API server with low limits.

The server here allows 4 read-only and 4 mutating requests at once, 10 open long-running
requests per user and 3 s per request (so also 3 s for a request's head). A request holds its
seat while its body is read, so a client that sends headers and then stalls its body holds a
seat until the deadline: that is how these tests flood the server without timing games.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kube.client.rest import RESTClient
from kube.testing.apiserver import ApiServerHarness

SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSAR_BODY = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
             "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
FLOODER, OTHER = "scheduler", "controller-manager"
REQUEST_TIMEOUT = 3


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint, extra_args=[
            "--max-requests-inflight", "4", "--max-mutating-requests-inflight", "4",
            "--max-long-running-requests-per-user", "10", "--request-timeout", f"{REQUEST_TIMEOUT}s"]) as harness:
        yield harness


def _tls(api: ApiServerHarness) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(api.pki.ca_cert))


@contextlib.asynccontextmanager
async def http(api: ApiServerHarness, identity: str, **limits: int) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api.server, verify=_tls(api), timeout=30,
                                 headers={"Authorization": f"Bearer {api.token(identity)}"},
                                 limits=httpx.Limits(**limits) if limits else httpx.Limits()) as client:
        yield client


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, object]:
        return dict(json.loads(self.body))


class RawConnection:
    """One TLS connection spoken to by hand, to send a request's head or body as slowly as a test likes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, api: ApiServerHarness) -> RawConnection:
        reader, writer = await asyncio.open_connection("127.0.0.1", api.port, ssl=_tls(api),
                                                       server_hostname="localhost")
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self, timeout: float) -> Answer:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        body = await asyncio.wait_for(self.reader.readexactly(int(headers.get("content-length", "0"))), timeout)
        return Answer(int(lines[0].split()[1]), headers, body)

    async def closed_by_server(self, timeout: float) -> bool:
        """True once the server closed the connection (EOF or reset) within `timeout` seconds."""
        try:
            data = await asyncio.wait_for(self.reader.read(1), timeout)
        except (ConnectionError, ssl.SSLError):
            return True
        return data == b""

    def close(self) -> None:
        self.writer.close()


async def stalled_post(api: ApiServerHarness, identity: str) -> RawConnection:
    """A create whose head arrived but whose body never completes: it holds a mutating seat until its deadline."""
    conn = await RawConnection.open(api)
    await conn.send((f"POST {SSAR} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {api.token(identity)}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{").encode())
    return conn


def metric(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    raise AssertionError(f"no sample {name}{labels}")


async def test_a_flood_by_one_user_gets_429_while_an_admin_and_another_user_are_served(api: ApiServerHarness) -> None:
    flood = [await stalled_post(api, FLOODER) for _ in range(8)]
    try:
        refused = [await conn.answer(timeout=2) for conn in flood[2:]]  # alone, a user holds half the seats
        for answer in refused:
            assert answer.status == 429 and answer.headers["retry-after"] == "1"
            assert answer.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": "Too many requests, please try again later.",
                                     "reason": "TooManyRequests", "details": {"retryAfterSeconds": 1},
                                     "code": 429}
        async with http(api, OTHER) as other, http(api, "admin") as admin:
            for client in (other, admin):
                assert (await client.post(SSAR, json=SSAR_BODY)).status_code == 201
                assert (await client.get("/api/v1/namespaces/default")).status_code in (200, 403)
            text = (await admin.get("/metrics")).text
        assert metric(text, "apiserver_dropped_requests_total", request_kind="mutating") >= 6
        assert metric(text, "apiserver_current_inflight_requests", request_kind="mutating") >= 2
        for conn in flood[:2]:  # the seats' holders still get their answer: a 504 at their deadline
            assert (await conn.answer(timeout=REQUEST_TIMEOUT + 10)).status == 504
    finally:
        for conn in flood:
            conn.close()


async def test_a_request_that_outruns_its_deadline_gets_upstreams_504(api: ApiServerHarness) -> None:
    conn = await stalled_post(api, "admin")
    try:
        answer = await conn.answer(timeout=REQUEST_TIMEOUT + 10)
    finally:
        conn.close()
    assert answer.status == 504
    assert answer.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": "Timeout: request did not complete within the allotted timeout",
                             "reason": "Timeout", "details": {}, "code": 504}


async def test_a_malformed_timeout_parameter_is_a_400_and_a_short_one_is_honoured(api: ApiServerHarness) -> None:
    async with http(api, "admin") as admin:
        resp = await admin.get("/api/v1/namespaces", params={"timeout": "soon"})
        assert resp.status_code == 400, resp.text
        assert resp.json()["message"] == ('invalid timeout specified in the request URL - '
                                          'time: invalid duration "soon"')
        assert (await admin.get("/api/v1/namespaces", params={"timeout": "30s"})).status_code == 200
    conn = await RawConnection.open(api)
    try:
        await conn.send((f"POST {SSAR}?timeout=1s HTTP/1.1\r\nHost: localhost\r\n"
                         f"Authorization: Bearer {api.token('admin')}\r\nContent-Length: 10\r\n\r\n{{").encode())
        assert (await conn.answer(timeout=REQUEST_TIMEOUT - 0.5)).status == 504
    finally:
        conn.close()


async def test_watches_take_no_seat_and_a_watch_flood_is_capped_per_user(api: ApiServerHarness) -> None:
    async with contextlib.AsyncExitStack() as stack:
        flooder = await stack.enter_async_context(http(api, FLOODER, max_connections=50))
        watches = [await stack.enter_async_context(flooder.stream("GET", "/api/v1/pods", params={"watch": "true"}))
                   for _ in range(12)]
        codes = [w.status_code for w in watches]
        assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]
        # Ten open watches hold none of the four read-only seats: the same user still lists.
        for _ in range(6):
            assert (await flooder.get("/api/v1/pods")).status_code == 200
        other = await stack.enter_async_context(http(api, OTHER))
        async with other.stream("GET", "/api/v1/pods", params={"watch": "true"}) as watch:
            assert watch.status_code == 200
        assert (await other.post(SSAR, json=SSAR_BODY)).status_code == 201
    # Once closed, the watches are given back.
    async with http(api, FLOODER) as flooder, flooder.stream("GET", "/api/v1/pods", params={"watch": "true"}) as w:
        assert w.status_code == 200


async def test_a_slowloris_client_is_cut_off_and_does_not_stop_others(api: ApiServerHarness) -> None:
    conn = await RawConnection.open(api)
    head = f"GET /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {api.token('admin')}\r\n"

    async def trickle() -> None:
        for byte in head.encode():
            await conn.send(bytes([byte]))
            await asyncio.sleep(0.2)

    sending = asyncio.create_task(trickle())
    try:
        async with http(api, OTHER) as other:
            for _ in range(5):
                assert (await other.post(SSAR, json=SSAR_BODY)).status_code == 201
        # The head (20 s at this pace) never completes: the server closes the connection at its header timeout.
        assert await conn.closed_by_server(timeout=REQUEST_TIMEOUT + 10)
        assert not sending.done() or sending.exception() is not None
    finally:
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, ssl.SSLError):
            await sending
        conn.close()


async def test_500_idle_connections_do_not_stop_another_client_and_are_closed(api: ApiServerHarness) -> None:
    idle = list(await asyncio.gather(*(RawConnection.open(api) for _ in range(500))))
    plain = [await asyncio.open_connection("127.0.0.1", api.port) for _ in range(100)]  # not even a TLS handshake
    try:
        async with http(api, OTHER) as other:
            for _ in range(10):
                assert (await other.post(SSAR, json=SSAR_BODY)).status_code == 201
                assert (await other.get("/healthz")).status_code == 200
        closed = await asyncio.gather(*(conn.closed_by_server(timeout=REQUEST_TIMEOUT + 10) for conn in idle))
        assert all(closed)
    finally:
        for conn in idle:
            conn.close()
        for _, writer in plain:
            writer.close()


async def test_every_request_of_a_burst_is_answered(api: ApiServerHarness) -> None:
    async with http(api, "admin", max_connections=500) as admin, http(api, OTHER, max_connections=200) as other:
        admins = await asyncio.gather(*(admin.post(SSAR, json=SSAR_BODY) for _ in range(500)))
        others = await asyncio.gather(*(other.post(SSAR, json=SSAR_BODY) for _ in range(200)))
    assert {r.status_code for r in admins} == {201}  # system:masters is never refused
    codes = [r.status_code for r in others]
    assert set(codes) <= {201, 429} and 201 in codes
    assert all(r.headers["retry-after"] == "1" for r in others if r.status_code == 429)


async def test_the_client_retries_what_the_server_asks_to_retry_later(api: ApiServerHarness) -> None:
    async with RESTClient(api.client_config(OTHER), max_connections=50) as client:
        answers = await asyncio.gather(*(client.request("POST", SSAR, body=SSAR_BODY) for _ in range(50)))
    assert all(a["status"]["allowed"] in (True, False) for a in answers)
