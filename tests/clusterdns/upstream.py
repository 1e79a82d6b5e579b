"""A stand-in for the host's resolver (the outside world): a tiny authoritative DNS server.

It listens on port 53 of a loopback address of its own (127.x.y.z), so a resolv.conf that
names it is an ordinary one (`nameserver 127.x.y.z`), over UDP and TCP, in a thread. It
knows a few fixed names under `example.test` (RFC 2606), answers NXDOMAIN for the rest,
and records each question with the transport it came over. An answer larger than 512
bytes over UDP is sent truncated (TC), as any server does, so clients must retry on TCP.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from types import TracebackType
from typing import Self

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

__all__ = ["BIG_TXT_RECORDS", "FakeUpstream"]

BIG_TXT_RECORDS = 40
RECORDS = {
    ("www.example.test.", "A"): ["192.0.2.10"],
    ("web.example.test.", "A"): ["192.0.2.20"],
    ("big.example.test.", "TXT"): [f'"record {i:02d} {"x" * 40}"' for i in range(BIG_TXT_RECORDS)],
}


class FakeUpstream:
    def __init__(self) -> None:
        self.address = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
        self.questions: list[tuple[str, str, str]] = []  # (name, type, transport)
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def answer(self, wire: bytes, transport: str) -> bytes:
        query = dns.message.from_wire(wire)
        q = query.question[0]
        name, rdtype = q.name.to_text().lower(), dns.rdatatype.to_text(q.rdtype)
        self.questions.append((name, rdtype, transport))
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA | dns.flags.RA
        values = RECORDS.get((name, rdtype))
        if values:
            response.answer.append(dns.rrset.from_text_list(q.name, 60, "IN", rdtype, values))
        elif not any(n == name for n, _ in RECORDS):
            response.set_rcode(dns.rcode.NXDOMAIN)
        try:
            return response.to_wire(max_size=512 if transport == "udp" else 65535)
        except dns.exception.TooBig:
            response.answer.clear()
            response.flags |= dns.flags.TC
            return response.to_wire()

    def _serve_udp(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self._udp.recvfrom(4096)
            except OSError:
                return
            if self._stop.is_set() or len(data) < 12:
                continue
            self._udp.sendto(self.answer(data, "udp"), peer)

    def _serve_tcp(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._tcp.accept()
            except OSError:
                return
            with conn:
                header = conn.recv(2, socket.MSG_WAITALL)
                if len(header) == 2:
                    data = conn.recv(struct.unpack("!H", header)[0], socket.MSG_WAITALL)
                    reply = self.answer(data, "tcp")
                    conn.sendall(struct.pack("!H", len(reply)) + reply)

    def resolv_conf(self) -> str:
        return f"# written by the test\nsearch example.test\nnameserver {self.address}\noptions ndots:2\n"

    def __enter__(self) -> Self:
        self._udp.bind((self.address, 53))
        self._tcp.bind((self.address, 53))
        self._tcp.listen(16)
        for target in (self._serve_udp, self._serve_tcp):
            thread = threading.Thread(target=target, daemon=True, name=f"fake-upstream-{target.__name__}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        for sock in (self._udp, self._tcp):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for thread in self._threads:
            thread.join(timeout=5)
