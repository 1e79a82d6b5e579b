"""`python -m clusterdns` against a real API server, asked by a real DNS client over UDP and TCP.

The server runs as its own process with its own identity (system:kube-dns); the tests write
Services and EndpointSlices through the API, as a user and the EndpointSlice controller
would, and ask the server as a pod's resolver would. The host's resolver is a stand-in
(`tests.clusterdns.upstream`) named by the resolv.conf the server is given; it binds port
53 of a loopback address, which needs root.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import dns.asyncquery
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.reversename
import pytest
import pytest_asyncio

from kube.client import RESTClient
from kube.errors import NotFound
from kube.netutil import host_address
from kube.resources import ResourceInfo, resource_for_kind
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.ports import free_port
from kube.testing.process import Process
from tests.clusterdns.upstream import BIG_TXT_RECORDS, FakeUpstream

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(os.geteuid() != 0, reason="the stand-in upstream resolver binds port 53")]


def _info(api_version: str, kind: str) -> ResourceInfo:
    found = resource_for_kind(api_version, kind)
    assert found is not None
    return found


SERVICES, SLICES = _info("v1", "Service"), _info("discovery.k8s.io/v1", "EndpointSlice")
NAMESPACES, ENDPOINTS = _info("v1", "Namespace"), _info("v1", "Endpoints")


@dataclass
class ClusterDNS:
    process: Process
    port: int
    upstream: FakeUpstream

    async def ask(self, name: str, rdtype: str = "A", *, tcp: bool = False) -> dns.message.Message:
        query = dns.message.make_query(name, rdtype)
        if tcp:
            return await dns.asyncquery.tcp(query, "127.0.0.1", port=self.port, timeout=5)
        return await dns.asyncquery.udp(query, "127.0.0.1", port=self.port, timeout=5)

    async def values(self, name: str, rdtype: str = "A", *, tcp: bool = False) -> list[str]:
        """The answer's records of type `rdtype` (CNAMEs left out), sorted."""
        response = await self.ask(name, rdtype, tcp=tcp)
        wanted = dns.rdatatype.from_text(rdtype)
        return sorted(r.to_text() for rrset in response.answer if rrset.rdtype == wanted for r in rrset)


@pytest.fixture(scope="module")
def cluster_dns(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterDNS]:
    workdir = tmp_path_factory.mktemp("clusterdns")
    with FakeUpstream() as upstream:
        resolv_conf = workdir / "resolv.conf"
        resolv_conf.write_text(upstream.resolv_conf())
        port = free_port()
        # Every address, so the tests ask on 127.0.0.1 while the Service's endpoint is the host's
        # own address (an EndpointSlice may not name a loopback address).
        process = api.component("clusterdns", "--dns-bind-address", "0.0.0.0", "--dns-port", str(port),
                                "--resolv-conf", str(resolv_conf),
                                "--upstream-timeout", "1", "--log-level", "DEBUG", identity="dns",
                                log_path=workdir / "dns.log").start()
        try:
            yield ClusterDNS(process, port, upstream)
        finally:
            process.stop()
            sys.stderr.write(f"--- dns log ---\n{process.log()[-20000:]}\n")


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[tuple[RESTClient, str]]:
    namespace = f"dns-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as client:
        await client.create_raw(NAMESPACES, {"metadata": {"name": namespace}})
        yield client, namespace


def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def _slice(service: str, endpoints: list[dict[str, Any]], *, name: str | None = None,
           ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": name or f"{service}-abcde", "labels": {"kubernetes.io/service-name": service}},
            "endpoints": endpoints, "ports": ports if ports is not None else [{"name": "http", "port": 8080,
                                                                             "protocol": "TCP"}]}


async def test_a_srv_and_ptr_of_a_cluster_ip_over_udp_and_tcp(cluster_dns: ClusterDNS,
                                                              admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    created = await client.create_raw(SERVICES, _service("web", ports=[
        {"name": "http", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"},
        {"name": "metrics", "port": 9090, "protocol": "TCP"}]), ns)
    ip = created["spec"]["clusterIP"]
    fqdn = f"web.{ns}.svc.cluster.local."

    async def answered() -> bool:
        return await cluster_dns.values(fqdn) == [ip]

    await eventually(answered, message="the Service's A record")
    for tcp in (False, True):
        response = await cluster_dns.ask(f"WEB.{ns}.svc.cluster.local", tcp=tcp)  # case does not matter
        assert response.rcode() == dns.rcode.NOERROR and response.flags & dns.flags.AA
        assert [r.to_text() for r in response.answer[0]] == [ip]
        assert response.answer[0].name.to_text() == f"WEB.{ns}.svc.cluster.local."  # the question's spelling
        assert response.answer[0].ttl == 5
        assert await cluster_dns.values(f"_http._tcp.{fqdn}", "SRV", tcp=tcp) == [f"0 100 80 {fqdn}"]
    assert await cluster_dns.values(f"_dns._udp.{fqdn}", "SRV") == [f"0 100 53 {fqdn}"]
    srv = await cluster_dns.ask(f"_http._tcp.{fqdn}", "SRV")
    assert [(rrset.name.to_text(), [r.to_text() for r in rrset]) for rrset in srv.additional] == [(fqdn, [ip])]
    assert await cluster_dns.values(dns.reversename.from_address(ip).to_text(), "PTR") == [fqdn]

    missing = await cluster_dns.ask(f"nothing.{ns}.svc.cluster.local")
    assert missing.rcode() == dns.rcode.NXDOMAIN and missing.flags & dns.flags.AA
    assert [rrset.rdtype for rrset in missing.authority] == [dns.rdatatype.SOA]
    no_data = await cluster_dns.ask(fqdn, "AAAA")
    assert no_data.rcode() == dns.rcode.NOERROR and not no_data.answer
    assert (await cluster_dns.ask(f"_nope._tcp.{fqdn}", "SRV")).rcode() == dns.rcode.NXDOMAIN


async def test_headless_service_answers_its_ready_endpoints_and_follows_changes(
        cluster_dns: ClusterDNS, admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    await client.create_raw(SERVICES, _service("db", clusterIP="None", ports=[{"name": "pg", "port": 5432}]), ns)
    endpoints = [{"addresses": ["10.244.1.5"], "hostname": "db-0", "conditions": {"ready": True}},
                 {"addresses": ["10.244.2.6"], "hostname": "db-1", "conditions": {"ready": True}},
                 {"addresses": ["10.244.1.7"], "hostname": "db-2", "conditions": {"ready": False}}]
    await client.create_raw(SLICES, _slice("db", endpoints, ports=[{"name": "pg", "port": 5432,
                                                                    "protocol": "TCP"}]), ns)
    fqdn = f"db.{ns}.svc.cluster.local."

    async def addresses(expected: list[str], name: str = fqdn) -> bool:
        return await cluster_dns.values(name) == expected

    await eventually(lambda: addresses(["10.244.1.5", "10.244.2.6"]), message="only the ready pods' IPs")
    assert await cluster_dns.values(fqdn, tcp=True) == ["10.244.1.5", "10.244.2.6"]
    assert await cluster_dns.values(f"db-0.{fqdn}") == ["10.244.1.5"]
    assert await cluster_dns.values(f"_pg._tcp.{fqdn}", "SRV") == [f"0 50 5432 db-0.{fqdn}", f"0 50 5432 db-1.{fqdn}"]
    assert await cluster_dns.values("6.2.244.10.in-addr.arpa.", "PTR") == [f"db-1.{fqdn}"]
    assert (await cluster_dns.ask(f"db-2.{fqdn}")).rcode() == dns.rcode.NXDOMAIN  # not ready: no name

    # db-0 turns not ready and db-2 ready: the answers follow the slice.
    current = await client.get_raw(SLICES, "db-abcde", ns)
    current["endpoints"][0]["conditions"]["ready"] = False
    current["endpoints"][2]["conditions"]["ready"] = True
    await client.replace_raw(SLICES, current, name="db-abcde", namespace=ns)
    await eventually(lambda: addresses(["10.244.1.7", "10.244.2.6"]), message="the slice's new ready set")

    await client.delete_raw(SERVICES, "db", ns)

    async def gone() -> bool:
        return (await cluster_dns.ask(fqdn)).rcode() == dns.rcode.NXDOMAIN

    await eventually(gone, message="the deleted Service's name gone")


async def test_external_name_is_a_cname_followed_upstream(cluster_dns: ClusterDNS,
                                                          admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    await client.create_raw(SERVICES, _service("search", type="ExternalName", externalName="www.example.test"), ns)
    fqdn = f"search.{ns}.svc.cluster.local."

    async def cname() -> dns.message.Message | None:
        response = await cluster_dns.ask(fqdn)
        return response if response.answer else None

    response = await eventually(cname, message="the ExternalName's CNAME")
    assert [(rrset.name.to_text(), dns.rdatatype.to_text(rrset.rdtype), [r.to_text() for r in rrset])
            for rrset in response.answer] == [(fqdn, "CNAME", ["www.example.test."]),
                                              ("www.example.test.", "A", ["192.0.2.10"])]
    assert await cluster_dns.values(fqdn, "CNAME") == ["www.example.test."]


async def test_other_names_are_forwarded_to_the_host_resolvers(cluster_dns: ClusterDNS) -> None:
    assert await cluster_dns.values("www.example.test.") == ["192.0.2.10"]
    assert await cluster_dns.values("www.example.test.", tcp=True) == ["192.0.2.10"]
    assert ("www.example.test.", "A", "udp") in cluster_dns.upstream.questions
    assert (await cluster_dns.ask("nope.example.test.")).rcode() == dns.rcode.NXDOMAIN

    # Too big for UDP: the server asks upstream again over TCP, and tells its client to do the same.
    query = dns.message.make_query("big.example.test.", "TXT")
    response, over_tcp = await dns.asyncquery.udp_with_fallback(query, "127.0.0.1", port=cluster_dns.port,
                                                                 timeout=5)
    assert over_tcp and sum(len(rrset) for rrset in response.answer) == BIG_TXT_RECORDS
    assert ("big.example.test.", "TXT", "tcp") in cluster_dns.upstream.questions


async def test_publishes_the_kube_dns_service_and_where_it_listens(cluster_dns: ClusterDNS,
                                                                   api: ApiServerHarness) -> None:
    async with api.client("admin") as client:
        async def published() -> dict[str, Any] | None:
            try:
                return await client.get_raw(SLICES, "kube-dns", "kube-system")
            except NotFound:
                return None

        piece = await eventually(published, message="the kube-dns EndpointSlice")
        assert piece["endpoints"][0]["addresses"] == [host_address()]
        assert sorted((p["name"], p["protocol"], p["port"]) for p in piece["ports"]) == [
            ("dns", "UDP", cluster_dns.port), ("dns-tcp", "TCP", cluster_dns.port)]
        assert piece["metadata"]["labels"]["kubernetes.io/service-name"] == "kube-dns"
        service = await client.get_raw(SERVICES, "kube-dns", "kube-system")
        assert service["spec"]["clusterIP"] == "10.96.0.10" and "selector" not in service["spec"]
        assert sorted((p["name"], p["protocol"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]) == [
            ("dns", "UDP", 53, cluster_dns.port), ("dns-tcp", "TCP", 53, cluster_dns.port)]
        endpoints = await client.get_raw(ENDPOINTS, "kube-dns", "kube-system")
        assert endpoints["subsets"][0]["addresses"] == [{"ip": host_address()}]
        # The DNS answers for its own Service too.
        assert await cluster_dns.values("kube-dns.kube-system.svc.cluster.local.") == ["10.96.0.10"]

        # Someone deletes the slice: the server writes it again.
        await client.delete_raw(SLICES, "kube-dns", "kube-system")
        again = await eventually(published, message="the kube-dns EndpointSlice written again")
        assert again["metadata"]["uid"] != piece["metadata"]["uid"]
