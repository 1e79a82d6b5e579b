"""Services, Endpoints and EndpointSlices through the API: defaults, validation and what may change."""

from __future__ import annotations

from typing import Any

import httpx

from tests.apiserver.conftest import causes


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


def post(c: httpx.Client, ns: str, body: dict[str, Any]) -> httpx.Response:
    return c.post(f"/api/v1/namespaces/{ns}/services", json=body)


def test_service_validation_names_every_field(c: httpx.Client, ns: str) -> None:
    found = causes(post(c, ns, svc("Bad_Name", ports=[
        {"name": "web", "port": 0, "protocol": "TCPX", "targetPort": "no_such"},
        {"port": 81}], type="Bogus", selector={"bad key": "v"})))
    assert found["metadata.name"].startswith('Invalid value: "Bad_Name": a DNS-1035 label must consist of lower case')
    assert found["spec.ports[0].port"] == "Invalid value: 0: must be between 1 and 65535, inclusive"
    assert found["spec.ports[0].protocol"] == 'Unsupported value: "TCPX": supported values: "SCTP", "TCP", "UDP"'
    assert found["spec.ports[0].targetPort"].startswith('Invalid value: "no_such": must contain only')
    assert found["spec.ports[1].name"] == "Required value"
    assert found["spec.type"] == ('Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", '
                                  '"LoadBalancer", "NodePort"')
    assert found["spec.selector"].startswith('Invalid value: "bad key": name part must consist of alphanumeric')


def test_ports_external_name_and_headless_rules(c: httpx.Client, ns: str) -> None:
    assert causes(post(c, ns, svc("noports", ports=[]))) == {"spec.ports": "Required value"}
    assert causes(post(c, ns, svc("dup", ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81}]))) == {
        "spec.ports[1].name": 'Duplicate value: "a"'}
    assert causes(post(c, ns, svc("np", ports=[{"port": 80, "nodePort": 30080}]))) == {
        "spec.ports[0].nodePort": "Forbidden: may not be used when `type` is 'ClusterIP'"}
    assert causes(post(c, ns, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName"}})) == {
        "spec.externalName": "Required value"}
    assert causes(post(c, ns, svc("hl", type="NodePort", clusterIP="None")))["spec.clusterIP"] == \
        "Invalid value: \"None\": may not be set to 'None' for NodePort services"
    assert causes(post(c, ns, svc("badip", clusterIP="10.96.0.300"))) == {
        "spec.clusterIPs[0]": 'Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or '
                              '2001:db8::ffff)'}
    headless = post(c, ns, svc("headless-no-ports", clusterIP="None", ports=[]))
    assert headless.status_code == 201, headless.text


def test_status_is_written_through_its_subresource_only(c: httpx.Client, ns: str) -> None:
    body = post(c, ns, svc("lb", type="LoadBalancer")).json()
    assert body["spec"]["allocateLoadBalancerNodePorts"] is True and body["spec"]["ports"][0]["nodePort"]
    body["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}
    spec_write = c.put(f"/api/v1/namespaces/{ns}/services/lb", json=body)
    assert spec_write.json()["status"] == {"loadBalancer": {}}
    status_write = c.put(f"/api/v1/namespaces/{ns}/services/lb/status", json=spec_write.json() | {
        "status": body["status"]})
    assert status_write.status_code == 200 and status_write.json()["status"] == body["status"], status_write.text


def test_endpoints_and_slice_validation(c: httpx.Client, ns: str) -> None:
    ep = c.post(f"/api/v1/namespaces/{ns}/endpoints", json={"metadata": {"name": "bad"}, "subsets": [
        {"ports": [{"port": 80}]}, {"addresses": [{"ip": "127.0.0.1"}, {"ip": "nope"}], "ports": [{"port": 0}]}]})
    assert causes(ep) == {
        "subsets[0]": "Required value: must specify `addresses` or `notReadyAddresses`",
        "subsets[1].addresses[0].ip": 'Invalid value: "127.0.0.1": may not be in the loopback range '
                                      "(127.0.0.0/8, ::1/128)",
        "subsets[1].addresses[1].ip": 'Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or '
                                      "2001:db8::ffff)",
        "subsets[1].ports[0].port": "Invalid value: 0: must be between 1 and 65535, inclusive"}
    base = f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices"
    bad = c.post(base, json={"metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": [
        {"addresses": []}, {"addresses": ["fd00::1"]}], "ports": [{"name": "Http", "port": 80}]})
    assert causes(bad) == {
        "endpoints[0].addresses": "Required value: must contain at least 1 address",
        "endpoints[1].addresses[0]": 'Invalid value: "fd00::1": must be a valid IPv4 address',
        "ports[0].name": 'Invalid value: "Http": a lowercase RFC 1123 label must consist of lower case alphanumeric '
                         "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
                         "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}
    assert causes(c.post(base, json={"metadata": {"name": "s"}, "addressType": "IPv5"})) == {
        "addressType": 'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'}
    good = c.post(base, json={"metadata": {"name": "s"}, "addressType": "IPv4", "endpoints": []})
    assert good.status_code == 201, good.text
    changed = c.patch(f"{base}/s", json={"addressType": "IPv6"},
                      headers={"Content-Type": "application/merge-patch+json"})
    assert causes(changed) == {"addressType": 'Invalid value: "IPv6": field is immutable'}
