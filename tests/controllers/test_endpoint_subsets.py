"""The core/v1 Endpoints subsets as a pure function: ready and not-ready addresses, per-pod named
ports, repacking by address set, and the 1000-address cap."""

from __future__ import annotations

from controllers.endpoint import MAX_CAPACITY, desired_subsets
from controllers.endpoint.subsets import subsets_equal, truncate_subsets
from kube.api import Pod
from tests.controllers.builders import make_pod, make_service


def ready_pod(name: str, ip: str) -> Pod:
    return make_pod().name(name).ip(ip).ready(since="2024-01-01T00:00:00Z").obj()


def ips(addresses: list[dict[str, object]] | None) -> list[object]:
    return [a["ip"] for a in addresses or []]


def test_ready_and_not_ready_pods_share_one_subset() -> None:
    svc = make_service().port(80, target=8080, name="http").obj()
    pods = [ready_pod("b", "10.0.0.2"), make_pod().name("a").ip("10.0.0.1").obj(), ready_pod("c", "10.0.0.3")]
    (subset,) = desired_subsets(svc, pods)
    assert ips(subset["addresses"]) == ["10.0.0.2", "10.0.0.3"]
    assert ips(subset["notReadyAddresses"]) == ["10.0.0.1"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    address = subset["addresses"][0]
    assert address["nodeName"] == "node-1"
    assert address["targetRef"] == {"kind": "Pod", "namespace": "default", "name": "b", "uid": pods[0].metadata.uid}


def test_terminating_pods_are_left_out_unless_not_ready_addresses_are_published() -> None:
    leaving = make_pod().name("leaving").ip("10.0.0.1").ready(since="2024-01-01T00:00:00Z").terminating().obj()
    assert desired_subsets(make_service().port(80).obj(), [leaving]) == []
    (subset,) = desired_subsets(make_service().port(80).publish_not_ready().obj(),
                                [leaving, make_pod().name("b").ip("10.0.0.2").obj()])
    assert ips(subset["addresses"]) == ["10.0.0.1", "10.0.0.2"] and "notReadyAddresses" not in subset


def test_named_port_resolved_per_pod_repacks_by_address_set() -> None:
    svc = make_service().port(80, target="http", name="web").port(9100, name="metrics").obj()
    a = make_pod().name("a").ip("10.0.0.1").container_port(8080, name="http").ready(since="2024-01-01T00:00:00Z")
    b = make_pod().name("b").ip("10.0.0.2").container_port(9090, name="http").ready(since="2024-01-01T00:00:00Z")
    c = make_pod().name("c").ip("10.0.0.3").ready(since="2024-01-01T00:00:00Z")
    subsets = desired_subsets(svc, [a.obj(), b.obj(), c.obj()])
    summary = sorted((tuple(ips(s.get("addresses"))), tuple((p.get("name"), p["port"]) for p in s["ports"]))
                     for s in subsets)
    assert summary == [
        (("10.0.0.1",), (("web", 8080),)),
        (("10.0.0.1", "10.0.0.2", "10.0.0.3"), (("metrics", 9100),)),
        (("10.0.0.2",), (("web", 9090),)),
    ]


def test_headless_without_ports_lists_addresses_only() -> None:
    (subset,) = desired_subsets(make_service().headless().obj(), [ready_pod("a", "10.0.0.1")])
    assert ips(subset["addresses"]) == ["10.0.0.1"] and "ports" not in subset


def test_same_pods_give_equal_subsets_whatever_their_order() -> None:
    svc = make_service().port(80).obj()
    pods = [ready_pod(f"p{i}", f"10.0.0.{i}") for i in range(4)]
    assert subsets_equal(desired_subsets(svc, pods), desired_subsets(svc, list(reversed(pods))))


def test_truncation_keeps_ready_addresses_first() -> None:
    svc = make_service().port(80).obj()
    ready = [ready_pod(f"r{i}", f"10.1.{i // 250}.{i % 250}") for i in range(MAX_CAPACITY - 10)]
    not_ready = [make_pod().name(f"n{i}").ip(f"10.2.0.{i}").obj() for i in range(50)]
    subsets = desired_subsets(svc, [*ready, *not_ready])
    assert truncate_subsets(subsets)
    (subset,) = subsets
    assert len(subset["addresses"]) == MAX_CAPACITY - 10 and len(subset["notReadyAddresses"]) == 10
    assert not truncate_subsets(desired_subsets(svc, ready))
