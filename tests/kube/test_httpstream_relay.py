"""The byte relay of upgraded connections, and the request head the kubelet replays to a runtime.

Real TCP connections on localhost: a client, a relay in the middle (as the API server and the
kubelet's CRI handler run it) and a backend.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
import pytest_asyncio

from kube.httpstream import SocketStream, relay
from kubelet.streaming.cri import replay_head

pytestmark = pytest.mark.timeout(30)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Middle:
    port: int
    relayed: asyncio.Event


async def _serve(handler: Handler) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def digest_after_eof(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A backend that reads everything, then answers with its length and digest and closes."""
    h, n = hashlib.sha256(), 0
    while chunk := await reader.read(65536):
        h.update(chunk)
        n += len(chunk)
    writer.write(f"{n} {h.hexdigest()}".encode())
    await writer.drain()
    writer.close()


async def says_bye(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A backend that answers at once and closes, whatever the client still sends."""
    writer.write(b"bye")
    await writer.drain()
    writer.close()


@pytest_asyncio.fixture
async def middle(request: pytest.FixtureRequest) -> AsyncIterator[Middle]:
    """A relay in front of the backend the test names (indirect parametrization)."""
    backend, backend_port = await _serve(request.param)
    relayed = asyncio.Event()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        b_reader, b_writer = await asyncio.open_connection("127.0.0.1", backend_port)
        await relay(SocketStream(reader, writer), SocketStream(b_reader, b_writer))
        relayed.set()

    server, port = await _serve(proxy)
    try:
        yield Middle(port, relayed)
    finally:
        server.close()
        backend.close()


@pytest.mark.parametrize("middle", [digest_after_eof], indirect=True)
async def test_a_half_close_reaches_the_backend_and_its_answer_still_comes_back(middle: Middle) -> None:
    payload = bytes(range(256)) * (16 * 1024)  # 4 MiB: many chunks, each waiting for drain
    reader, writer = await asyncio.open_connection("127.0.0.1", middle.port)
    writer.write(payload)
    writer.write_eof()
    answer = await asyncio.wait_for(reader.read(), 20)
    assert answer == f"{len(payload)} {hashlib.sha256(payload).hexdigest()}".encode()
    await asyncio.wait_for(middle.relayed.wait(), 5)
    writer.close()


@pytest.mark.parametrize("middle", [says_bye], indirect=True)
async def test_the_backend_closing_first_ends_the_relay(middle: Middle) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", middle.port)
    assert await asyncio.wait_for(reader.read(), 10) == b"bye"
    writer.write(b"late bytes")  # the client's side is still open until it closes it
    writer.close()
    await asyncio.wait_for(middle.relayed.wait(), 5)


def test_the_replayed_head_targets_the_streaming_url_and_keeps_every_other_header() -> None:
    head = (b"GET /exec/default/web/app?command=sh&output=1 HTTP/1.1\r\n"
            b"Host: 10.0.0.5:10250\r\n"
            b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n"
            b"X-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")
    assert replay_head(head, target="/exec/AbCd?x=1", host="127.0.0.1:4321") == (
        b"GET /exec/AbCd?x=1 HTTP/1.1\r\n"
        b"Host: 127.0.0.1:4321\r\n"
        b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n"
        b"X-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")
