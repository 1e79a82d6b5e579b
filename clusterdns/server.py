"""The DNS server's sockets: UDP and TCP on one address and port, as every DNS server listens.

`bind()` opens both sockets first (port 0 picks one free for both), so a port in use fails
the process at start with OSError; `serve()` then answers until cancelled. Each UDP
datagram and each TCP connection is handled in its own task, owned by the server's
TaskGroup, so a slow forwarded query never holds up another; a handler's failure is logged
and answered with nothing (it never stops the server). TCP follows RFC 7766: two-byte
length-prefixed messages, several per connection, the connection closed after
`tcp_idle_timeout` seconds without a query.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from collections.abc import Awaitable, Callable
from typing import cast

__all__ = ["DNSServer", "Handler"]

logger = logging.getLogger(__name__)

Handler = Callable[..., Awaitable[bytes | None]]
"""`handler(wire, max_size=int|None, transport="udp"|"tcp")`: the response bytes, or None."""

UDP_MAX_SIZE = 512  # the handler raises it to the client's EDNS payload size


class _UDPProtocol(asyncio.DatagramProtocol):
    def __init__(self, server: DNSServer) -> None:
        self.server = server
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.server.spawn(self.server.answer_udp(self, data, addr))


class DNSServer:
    def __init__(self, handler: Handler, *, address: str = "0.0.0.0", port: int = 53,
                 tcp_idle_timeout: float = 10.0) -> None:
        self.handler, self.address, self.port = handler, address, port
        self.tcp_idle_timeout = tcp_idle_timeout
        self._udp: socket.socket | None = None
        self._tcp: socket.socket | None = None
        self._tasks: asyncio.TaskGroup | None = None

    def bind(self) -> int:
        """Open the UDP and TCP sockets; the port they share. OSError when it is taken."""
        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        for _ in range(20 if self.port == 0 else 1):
            tcp = socket.socket(family, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            udp = socket.socket(family, socket.SOCK_DGRAM)
            try:
                tcp.bind((self.address, self.port))
                udp.bind((self.address, tcp.getsockname()[1]))
            except OSError:
                tcp.close()
                udp.close()
                if self.port != 0:
                    raise
                continue  # the free TCP port was taken for UDP: pick another
            tcp.listen(128)
            tcp.setblocking(False)
            udp.setblocking(False)
            self._tcp, self._udp, self.port = tcp, udp, int(tcp.getsockname()[1])
            return self.port
        raise OSError(f"no port free for both UDP and TCP on {self.address}")

    def spawn(self, work: Awaitable[None]) -> None:
        assert self._tasks is not None
        self._tasks.create_task(self._guard(work))

    async def _guard(self, work: Awaitable[None]) -> None:
        try:
            await work
        except Exception:
            logger.exception("Answering a query failed")

    async def answer_udp(self, protocol: _UDPProtocol, data: bytes, addr: tuple[str, int]) -> None:
        response = await self.handler(data, max_size=UDP_MAX_SIZE, transport="udp")
        if response is not None and protocol.transport is not None and not protocol.transport.is_closing():
            protocol.transport.sendto(response, addr)

    async def _tcp_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    header = await asyncio.wait_for(reader.readexactly(2), self.tcp_idle_timeout)
                    (length,) = struct.unpack("!H", header)
                    data = await asyncio.wait_for(reader.readexactly(length), self.tcp_idle_timeout)
                except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                response = await self.handler(data, max_size=None, transport="tcp")
                if response is None:
                    continue
                writer.write(struct.pack("!H", len(response)) + response)
                await writer.drain()
        finally:
            writer.close()

    async def serve(self) -> None:
        """Answer until cancelled (binding first if `bind()` was not called)."""
        if self._udp is None:
            self.bind()
        assert self._udp is not None and self._tcp is not None
        loop = asyncio.get_running_loop()
        async with asyncio.TaskGroup() as tasks:
            self._tasks = tasks
            transport, _ = await loop.create_datagram_endpoint(lambda: _UDPProtocol(self), sock=self._udp)
            tcp = await asyncio.start_server(lambda r, w: self.spawn(self._tcp_connection(r, w)), sock=self._tcp)
            logger.info("Serving DNS", extra={"address": f"{self.address}:{self.port}", "transports": "udp,tcp"})
            try:
                await asyncio.Event().wait()
            finally:
                transport.close()
                tcp.close()
