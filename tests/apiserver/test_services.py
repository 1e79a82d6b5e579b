"""Services, Endpoints and EndpointSlices through the API: defaults, validation and what may change."""

from __future__ import annotations

from typing import Any

import httpx


def svc(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"app": name}, "ports": [{"port": 80}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def test_service_defaults(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/services", json=svc("web"))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    spec = body["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec
    assert body["status"] == {"loadBalancer": {}}


def test_node_port_and_headless_defaults(c: httpx.Client, ns: str) -> None:
    spec = c.post(f"/api/v1/namespaces/{ns}/services",
                  json=svc("np", type="NodePort", ports=[{"port": 80, "targetPort": "http"}])).json()["spec"]
    assert spec["externalTrafficPolicy"] == "Cluster" and spec["ports"][0]["targetPort"] == "http"
    headless = c.post(f"/api/v1/namespaces/{ns}/services", json={"metadata": {"name": "bare"},
                                                                 "spec": {"clusterIP": "None"}})
    assert headless.status_code == 201, headless.text
    hspec = headless.json()["spec"]
    assert hspec["clusterIPs"] == ["None"] and hspec["ipFamilyPolicy"] == "RequireDualStack"
    assert hspec["ipFamilies"] == ["IPv4", "IPv6"]
    ext = c.post(f"/api/v1/namespaces/{ns}/services", json={"metadata": {"name": "ext"}, "spec": {
        "type": "ExternalName", "externalName": "example.com"}})
    assert ext.status_code == 201, ext.text
    espec = ext.json()["spec"]
    assert "clusterIP" not in espec and "ipFamilies" not in espec and "internalTrafficPolicy" not in espec


def test_endpoints_and_endpoint_slice_defaults(c: httpx.Client, ns: str) -> None:
    ep = c.post(f"/api/v1/namespaces/{ns}/endpoints", json={"metadata": {"name": "e"}, "subsets": [
        {"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 8080}]}]})
    assert ep.status_code == 201, ep.text
    assert ep.json()["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]
    eps = c.post(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", json={
        "metadata": {"name": "e-abc", "labels": {"kubernetes.io/service-name": "e"}}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}], "ports": [{"port": 8080}]})
    assert eps.status_code == 201, eps.text
    assert eps.json()["ports"] == [{"name": "", "port": 8080, "protocol": "TCP"}]


def test_discovery_names_services(c: httpx.Client) -> None:
    core = {r["name"]: r for r in c.get("/api/v1").json()["resources"]}
    assert core["services"]["shortNames"] == ["svc"] and core["services"]["categories"] == ["all"]
    assert "services/status" in core and core["endpoints"]["shortNames"] == ["ep"]
    discovery = c.get("/apis/discovery.k8s.io/v1").json()["resources"]
    assert [r["name"] for r in discovery] == ["endpointslices"]
