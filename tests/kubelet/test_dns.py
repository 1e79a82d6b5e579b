"""Each pod's resolv.conf per dnsPolicy and dnsConfig, as upstream's kubelet builds it.

Table-driven on `DNSConfigurer.pod_dns` (the CRI DNSConfig the runtime receives), then a
kubelet on the simulated runtime, against a real API server: a pod that `cat`s its
/etc/resolv.conf prints what the sandbox was given.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Namespace, Pod
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.cri.interface import DNSConfig
from kubelet.cri.simulated import SimulatedRuntime
from kubelet.dns import DNSConfigurer, parse_resolv_conf
from tests.kubelet.running import running_kubelet

HOST = parse_resolv_conf("# the host's\nnameserver 192.168.1.1\nnameserver 192.168.1.2\n"
                         "search corp.example. lab.example\noptions timeout:2 edns0\n")
CLUSTER = ("ns1.svc.cluster.local", "svc.cluster.local", "cluster.local")


def _pod(**spec: Any) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p", "namespace": "ns1", "uid": "u1"},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}})


def test_parse_resolv_conf() -> None:
    assert DNSConfig(("192.168.1.1", "192.168.1.2"), ("corp.example", "lab.example"), ("timeout:2", "edns0")) == HOST
    assert parse_resolv_conf("search a b\nsearch c .\noptions ndots:1\noptions ndots:3 rotate\n") == DNSConfig(
        (), ("c",), ("ndots:3", "rotate"))


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, DNSConfig(("10.96.0.10",), (*CLUSTER, "corp.example", "lab.example"), ("ndots:5",))),
    ({"dnsPolicy": "ClusterFirst"}, DNSConfig(("10.96.0.10",), (*CLUSTER, "corp.example", "lab.example"),
                                              ("ndots:5",))),
    ({"dnsPolicy": "ClusterFirst", "hostNetwork": True}, HOST),
    ({"dnsPolicy": "ClusterFirstWithHostNet", "hostNetwork": True},
     DNSConfig(("10.96.0.10",), (*CLUSTER, "corp.example", "lab.example"), ("ndots:5",))),
    ({"dnsPolicy": "Default"}, HOST),
    ({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["example.com"],
                                         "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}},
     DNSConfig(("1.1.1.1",), ("example.com",), ("ndots:2", "edns0"))),
    ({"dnsConfig": {"nameservers": ["10.96.0.10", "1.1.1.1"], "searches": ["svc.cluster.local", "my.dns"],
                    "options": [{"name": "ndots", "value": "2"}, {"name": "single-request-reopen"}]}},
     DNSConfig(("10.96.0.10", "1.1.1.1"), (*CLUSTER, "corp.example", "lab.example", "my.dns"),
               ("ndots:2", "single-request-reopen"))),
    ({"dnsPolicy": "Default", "dnsConfig": {"nameservers": ["1.1.1.1", "8.8.8.8"]}},
     DNSConfig(("192.168.1.1", "192.168.1.2", "1.1.1.1"), HOST.searches, HOST.options)),
])
def test_pod_dns_per_policy(spec: dict[str, Any], expected: DNSConfig) -> None:
    configurer = DNSConfigurer(cluster_dns=("10.96.0.10",), cluster_domain="cluster.local", host=HOST)
    assert configurer.pod_dns(_pod(**spec)).config == expected


def test_limits_and_warnings() -> None:
    configurer = DNSConfigurer(cluster_dns=("10.96.0.10",), host=HOST)
    result = configurer.pod_dns(_pod(dnsPolicy="Default", dnsConfig={"nameservers": ["1.1.1.1", "8.8.8.8"]}))
    assert [reason for reason, _ in result.warnings] == ["DNSConfigForming"]
    assert result.warnings[0][1].endswith("the applied nameserver line is: 192.168.1.1 192.168.1.2 1.1.1.1")
    many = configurer.pod_dns(_pod(dnsConfig={"searches": [f"d{i}.example" for i in range(40)]}))
    assert len(many.config.searches) == 32 and many.config.searches[:3] == CLUSTER
    assert "Search Line limits were exceeded" in many.warnings[0][1]


def test_without_cluster_dns_cluster_first_falls_back_to_the_host() -> None:
    result = DNSConfigurer(host=HOST).pod_dns(_pod())
    assert result.config == HOST
    assert [reason for reason, _ in result.warnings] == ["MissingClusterDNS"]
    assert 'cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.' in result.warnings[0][1]
    no_file = DNSConfigurer(host=None).pod_dns(_pod(dnsPolicy="Default")).config
    assert no_file == DNSConfig(("127.0.0.1",), (".",))


def test_resolv_conf_is_rendered_as_containerd_writes_it() -> None:
    config = DNSConfig(("10.96.0.10", "1.1.1.1"), CLUSTER, ("ndots:5",))
    assert config.resolv_conf() == ("search ns1.svc.cluster.local svc.cluster.local cluster.local\n"
                                    "nameserver 10.96.0.10\nnameserver 1.1.1.1\noptions ndots:5\n")
    assert DNSConfig().resolv_conf() == ""


CIDR = "10.244.9.0/24"


@pytest_asyncio.fixture
async def kubelet(api: ApiServerHarness, tmp_path: Any) -> AsyncIterator[SimulatedRuntime]:
    resolv_conf = tmp_path / "resolv.conf"
    resolv_conf.write_text("nameserver 192.168.7.7\nsearch home.example\n")
    async with running_kubelet(api, tmp_path, node="node-2", pod_cidr=CIDR, cluster_dns=("10.96.0.10",),
                               cluster_domain="cluster.local", resolv_conf=str(resolv_conf)) as (_, runtime):
        yield runtime


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[tuple[RESTClient, str]]:
    name = f"dns-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as c:
        await c.create(Namespace.model_validate({"metadata": {"name": name}}))
        yield c, name


@pytest.mark.timeout(60)
async def test_a_pod_reads_its_resolv_conf_per_policy(kubelet: SimulatedRuntime,
                                                      admin: tuple[RESTClient, str]) -> None:
    client, ns = admin
    for name, spec in (("cluster", {}), ("host", {"dnsPolicy": "Default"}),
                       ("none", {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"],
                                                                    "options": [{"name": "edns0"}]}})):
        await client.create(Pod.model_validate({"metadata": {"name": name, "namespace": ns}, "spec": {
            "nodeName": "node-2", "restartPolicy": "Never", **spec,
            "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "cat /etc/resolv.conf"]}]}}))

    async def printed(pod: str) -> list[str] | None:
        for container in await kubelet.list_containers():
            if container.labels.get("io.kubernetes.pod.name") == pod and container.labels.get(
                    "io.kubernetes.pod.namespace") == ns:
                return [line.text for line in kubelet.container_logs(container.id)][1:] or None
        return None

    assert await eventually(lambda: printed("cluster"), message="the ClusterFirst pod's resolv.conf") == [
        f"search {ns}.svc.cluster.local svc.cluster.local cluster.local home.example", "nameserver 10.96.0.10",
        "options ndots:5"]
    assert await eventually(lambda: printed("host"), message="the Default pod's") == [
        "search home.example", "nameserver 192.168.7.7"]
    assert await eventually(lambda: printed("none"), message="the None pod's") == [
        "nameserver 1.1.1.1", "options edns0"]
