"""Service, Endpoints and EndpointSlice Tables: upstream's columns and cells."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from apiserver.endpoints.tables import to_table

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
META = {"name": "web", "creationTimestamp": "2024-05-01T11:55:00Z"}


def cells(kind: str, obj: dict[str, Any]) -> list[Any]:
    return list(to_table(kind, [{"metadata": META, **obj}], now=NOW)["rows"][0]["cells"])


def test_columns() -> None:
    def cols(kind: str) -> list[tuple[str, int]]:
        return [(c["name"], c["priority"]) for c in to_table(kind, [], now=NOW)["columnDefinitions"]]
    assert cols("Service") == [("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0),
                               ("Age", 0), ("Selector", 1)]
    assert cols("Endpoints") == [("Name", 0), ("Endpoints", 0), ("Age", 0)]
    assert cols("EndpointSlice") == [("Name", 0), ("AddressType", 0), ("Ports", 0), ("Endpoints", 0), ("Age", 0)]


@pytest.mark.parametrize(("spec", "status", "expected"), [
    ({"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 53, "protocol": "UDP"},
                                                                   {"port": 53, "protocol": "TCP"}],
      "selector": {"k8s-app": "kube-dns"}},
     {}, ["ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "5m", "k8s-app=kube-dns"]),
    ({"type": "NodePort", "clusterIPs": ["10.96.3.4"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]},
     {}, ["NodePort", "10.96.3.4", "<none>", "80:30080/TCP", "5m", "<none>"]),
    ({"type": "ClusterIP", "clusterIPs": ["None"], "ports": []}, {}, ["ClusterIP", "None", "<none>", "<none>", "5m",
                                                                      "<none>"]),
    ({"type": "ExternalName", "externalName": "example.com"}, {},
     ["ExternalName", "<none>", "example.com", "<none>", "5m", "<none>"]),
    ({"type": "LoadBalancer", "clusterIPs": ["10.96.0.9"], "ports": [{"port": 443, "nodePort": 31000,
                                                                      "protocol": "TCP"}]},
     {"loadBalancer": {}}, ["LoadBalancer", "10.96.0.9", "<pending>", "443:31000/TCP", "5m", "<none>"]),
])
def test_service_cells(spec: dict[str, Any], status: dict[str, Any], expected: list[str]) -> None:
    assert cells("Service", {"spec": spec, "status": status}) == ["web", *expected]


def test_endpoints_cells_list_three_then_more() -> None:
    subsets = [{"addresses": [{"ip": f"10.244.0.{i}"} for i in range(1, 5)], "ports": [{"port": 80}]}]
    assert cells("Endpoints", {"subsets": subsets}) == [
        "web", "10.244.0.1:80,10.244.0.2:80,10.244.0.3:80 + 1 more...", "5m"]
    assert cells("Endpoints", {}) == ["web", "<none>", "5m"]


def test_endpoint_slice_cells() -> None:
    eps = {"addressType": "IPv4", "ports": [{"name": "http", "port": 80}, {"name": "named"}],
           "endpoints": [{"addresses": ["10.244.1.2"]}, {"addresses": ["10.244.2.3"]}]}
    assert cells("EndpointSlice", eps) == ["web", "IPv4", "80,named", "10.244.1.2,10.244.2.3", "5m"]
    assert cells("EndpointSlice", {"addressType": "IPv4"}) == ["web", "IPv4", "<unset>", "<unset>", "5m"]
