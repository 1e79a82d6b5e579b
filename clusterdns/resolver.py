"""From a query's bytes to a response's bytes: cluster names from the zone, the rest upstream.

`ClusterResolver.handle(wire, max_size=...)` is what both transports call. Guarantees:
- it never raises on what a client sends: a message it cannot parse gets FORMERR (or
  nothing, when not even the header is there), an opcode other than QUERY NOTIMP, a query
  with other than one question FORMERR, a failed forward SERVFAIL;
- cluster answers are authoritative (AA) and offer recursion (RA), since other names are
  forwarded; the zone is read once per query, so a zone swapped in meanwhile never mixes
  into an answer;
- an answer that does not fit `max_size` (UDP: 512 bytes, or the client's EDNS payload
  size) is sent truncated (TC, no records), so the client asks again over TCP.
"""

from __future__ import annotations

import logging

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdatatype
import dns.rrset

from clusterdns.answer import answer_question
from clusterdns.forward import Forwarder, ForwardError
from clusterdns.records import Zone

__all__ = ["ClusterResolver"]

logger = logging.getLogger(__name__)

UDP_DEFAULT_SIZE = 512


def _header_only(wire: bytes, rcode: dns.rcode.Rcode) -> bytes | None:
    """A response of just a header (same id, QR set) for a message too broken to parse."""
    if len(wire) < 12:
        return None
    flags = dns.flags.QR | (int(wire[2]) << 8 & dns.flags.RD) | int(rcode)
    return wire[:2] + flags.to_bytes(2, "big") + bytes(8)


def _fit(response: dns.message.Message, max_size: int | None) -> bytes:
    if max_size is None:
        return response.to_wire()
    try:
        return response.to_wire(max_size=max_size)
    except dns.exception.TooBig:
        response.flags |= dns.flags.TC
        for section in (response.answer, response.authority, response.additional):
            section.clear()
        return response.to_wire(max_size=max_size)


class ClusterResolver:
    """Answers queries; `zone` is replaced whole by the watcher whenever the caches change."""

    def __init__(self, zone: Zone, forwarder: Forwarder, *, ttl: int = 5) -> None:
        self.zone, self.forwarder, self.ttl = zone, forwarder, ttl

    async def handle(self, wire: bytes, *, max_size: int | None = None, transport: str = "udp") -> bytes | None:
        """The response to one query message, or None when nothing should be sent back."""
        try:
            query = dns.message.from_wire(wire)
        except dns.exception.DNSException:
            return _header_only(wire, dns.rcode.FORMERR)
        if query.flags & dns.flags.QR:
            return None  # a response sent to us: never answer one (it could start a loop)
        response = await self._respond(query, transport)
        if max_size is not None:
            max_size = max(UDP_DEFAULT_SIZE, query.payload if query.edns >= 0 else UDP_DEFAULT_SIZE)
        return _fit(response, max_size)

    async def _respond(self, query: dns.message.Message, transport: str) -> dns.message.Message:
        response = dns.message.make_response(query)
        if query.opcode() != dns.opcode.QUERY:
            response.set_rcode(dns.rcode.NOTIMP)
            return response
        if len(query.question) != 1:
            response.set_rcode(dns.rcode.FORMERR)
            return response
        question = query.question[0]
        zone = self.zone
        answer = answer_question(zone, question.name, question.rdtype, ttl=self.ttl)
        if answer.forward:
            return await self._forward(query, response, transport)
        response.flags |= dns.flags.AA | dns.flags.RA
        response.set_rcode(answer.rcode)
        response.answer += answer.answer
        response.authority += answer.authority
        response.additional += answer.additional
        if answer.chase is not None:
            response.flags &= ~dns.flags.AA
            response.answer += await self._chase(answer.chase, question.rdtype)
        logger.debug("Answered", extra={"qname": question.name.to_text(),
                                        "type": dns.rdatatype.to_text(question.rdtype),
                                        "rcode": dns.rcode.to_text(response.rcode()), "transport": transport})
        return response

    async def _forward(self, query: dns.message.Message, response: dns.message.Message,
                       transport: str) -> dns.message.Message:
        try:
            upstream = await self.forwarder.resolve(query)
        except ForwardError as e:
            logger.warning("Forwarding failed", extra={"qname": query.question[0].name.to_text(), "error": str(e)})
            response.set_rcode(dns.rcode.SERVFAIL)
            response.flags |= dns.flags.RA
            upstream = response
        upstream.id = query.id
        logger.debug("Forwarded", extra={"qname": query.question[0].name.to_text(), "transport": transport,
                                         "rcode": dns.rcode.to_text(upstream.rcode())})
        return upstream

    async def _chase(self, target: dns.name.Name, rdtype: dns.rdatatype.RdataType) -> list[dns.rrset.RRset]:
        """The upstream records of an ExternalName's target (nothing when upstream fails)."""
        try:
            upstream = await self.forwarder.resolve(dns.message.make_query(target, rdtype))
        except ForwardError as e:
            logger.info("Resolving an ExternalName target failed", extra={"target": target.to_text(), "error": str(e)})
            return []
        return list(upstream.answer)
