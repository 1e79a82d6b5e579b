"""The proxy's model from Service and EndpointSlice dicts: which service ports, which endpoints."""

from __future__ import annotations

import pytest

from proxy.model import Endpoint, ServicePortName, build_model, usable_endpoints
from tests.proxy.builders import make_service, make_slice


def test_a_cluster_ip_port_goes_to_its_ready_endpoints_only() -> None:
    model = build_model([make_service("web")],
                        [make_slice("web", [("10.88.1.5", True), ("10.88.1.6", None), ("10.88.1.7", False)])])
    [sp] = model.service_ports
    assert sp.name == ServicePortName("default", "web", "http") and str(sp.name) == "default/web:http"
    assert (sp.cluster_ip, sp.port, sp.protocol, sp.node_port) == ("10.96.0.10", 80, "TCP", None)
    # An unset ready condition counts as ready, as the API documents for consumers.
    assert [str(e) for e in sp.endpoints] == ["10.88.1.5:8080", "10.88.1.6:8080"]


@pytest.mark.parametrize(("spec", "why"), [
    ({"clusterIP": "None"}, "headless"),
    ({"type": "ExternalName", "clusterIP": "", "externalName": "example.com"}, "ExternalName"),
    ({"clusterIP": ""}, "no cluster IP yet"),
])
def test_services_without_a_cluster_ip_get_no_rules(spec: dict[str, str], why: str) -> None:
    service = make_service("web")
    service["spec"].update(spec)
    assert build_model([service], [make_slice("web", [("10.88.1.5", True)])]).service_ports == (), why


def test_ports_match_slice_ports_by_name_and_protocol() -> None:
    service = make_service("dns", ports=[{"name": "dns", "port": 53, "protocol": "UDP"},
                                         {"name": "dns-tcp", "port": 53, "protocol": "TCP"}])
    slices = [{**make_slice("dns", [("10.88.1.9", True)], port=53, port_name="dns", protocol="UDP"),
               "ports": [{"name": "dns", "port": 53, "protocol": "UDP"},
                         {"name": "dns-tcp", "port": 5353, "protocol": "TCP"}]}]
    udp, tcp = build_model([service], slices).service_ports  # ordered by port name
    assert (str(tcp.name), tcp.protocol, [str(e) for e in tcp.endpoints]) == ("default/dns:dns-tcp", "TCP",
                                                                               ["10.88.1.9:5353"])
    assert (str(udp.name), udp.protocol, [str(e) for e in udp.endpoints]) == ("default/dns:dns", "UDP",
                                                                               ["10.88.1.9:53"])


def test_an_unnamed_port_matches_the_unnamed_slice_port() -> None:
    service = make_service("web", ports=[{"port": 80, "protocol": "TCP"}])
    [sp] = build_model([service], [make_slice("web", [("10.88.1.5", True)], port_name="")]).service_ports
    assert str(sp.name) == "default/web" and [str(e) for e in sp.endpoints] == ["10.88.1.5:8080"]


def test_slices_of_other_services_and_namespaces_are_not_mixed_in() -> None:
    slices = [make_slice("web", [("10.88.1.5", True)]), make_slice("api", [("10.88.1.6", True)]),
              make_slice("web", [("10.88.1.7", True)], namespace="other")]
    [sp] = build_model([make_service("web")], slices).service_ports
    assert [e.ip for e in sp.endpoints] == ["10.88.1.5"]


def test_an_address_in_two_slices_counts_once_and_is_ready_if_either_says_so() -> None:
    slices = [make_slice("web", [("10.88.1.5", False)], name="web-a"),
              make_slice("web", [("10.88.1.5", True), ("10.88.1.6", True)], name="web-b")]
    [sp] = build_model([make_service("web")], slices).service_ports
    assert [str(e) for e in sp.endpoints] == ["10.88.1.5:8080", "10.88.1.6:8080"]


def test_serving_terminating_endpoints_are_used_only_when_none_is_ready() -> None:
    terminating = Endpoint("10.88.1.5", 80, ready=False, serving=True, terminating=True)
    gone = Endpoint("10.88.1.6", 80, ready=False, serving=False, terminating=True)
    ready = Endpoint("10.88.1.7", 80)
    assert usable_endpoints([terminating, gone, ready]) == (ready,)
    assert usable_endpoints([terminating, gone]) == (terminating,)
    assert usable_endpoints([gone]) == ()
    # From slices: a terminating pod that still serves keeps receiving while nothing else can.
    model = build_model([make_service("web")],
                        [make_slice("web", [("10.88.1.5", False)], serving=True, terminating=True)])
    assert [e.ip for e in model.service_ports[0].endpoints] == ["10.88.1.5"]


def test_node_port_external_ips_and_client_ip_affinity() -> None:
    service = make_service("web", type_="NodePort", externalIPs=["192.0.2.10"], sessionAffinity="ClientIP",
                           ports=[{"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080}])
    [sp] = build_model([service], []).service_ports
    assert (sp.node_port, sp.external_ips, sp.affinity_seconds, sp.endpoints) == (30080, ("192.0.2.10",), 10800, ())
    service["spec"]["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 60}}
    assert build_model([service], []).service_ports[0].affinity_seconds == 60


def test_external_traffic_policy_local_keeps_the_endpoints_of_this_node() -> None:
    service = make_service("web", type_="NodePort", externalTrafficPolicy="Local",
                           ports=[{"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080}])
    slices = [make_slice("web", [("10.88.1.5", True)], name="a", node="node-1"),
              make_slice("web", [("10.88.2.5", True)], name="b", node="node-2")]
    [sp] = build_model([service], slices, local_nodes=frozenset({"node-2"})).service_ports
    assert [e.ip for e in sp.endpoints] == ["10.88.1.5", "10.88.2.5"]
    assert sp.local_endpoints is not None and [e.ip for e in sp.local_endpoints] == ["10.88.2.5"]
    assert build_model([service], slices, local_nodes=frozenset({"node-3"})).service_ports[0].local_endpoints == ()


def test_the_model_is_ordered_and_reports_as_json() -> None:
    services = [make_service("b", cluster_ip="10.96.0.12"), make_service("a", cluster_ip="10.96.0.11")]
    model = build_model(services, [make_slice("a", [("10.88.1.5", True)])])
    assert [sp.name.name for sp in model.service_ports] == ["a", "b"]
    assert model == build_model(list(reversed(services)), [make_slice("a", [("10.88.1.5", True)])])
    assert model.to_dict()["servicePorts"][0] == {"name": "default/a:http", "protocol": "TCP",
                                                  "clusterIP": "10.96.0.11", "port": 80,
                                                  "endpoints": ["10.88.1.5:8080"]}
