"""Cluster IPs and node ports: honoured when free, never handed out twice (also across a restart),
given back on delete and on a type change, and the `kubernetes` Service at the range's first address.

The API server of this module has small ranges (14 cluster IPs, 10 node ports) so that
exhausting them is quick.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from tests.apiserver.conftest import causes

CIDR, PORTS = "10.100.0.0/28", "30000-30009"


@pytest.fixture(scope="module")
def api(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    with ApiServerHarness(tmp_path_factory.mktemp("apiserver"), etcd_endpoint=etcd_endpoint, extra_args=[
            "--service-cluster-ip-range", CIDR, "--service-node-port-range", PORTS]) as harness:
        yield harness


def svc(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"app": name}, "ports": [{"port": 80}]}
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def create(c: httpx.Client, ns: str, body: dict[str, Any]) -> httpx.Response:
    return c.post(f"/api/v1/namespaces/{ns}/services", json=body)


def test_kubernetes_service_and_its_endpoints(c: httpx.Client, api: ApiServerHarness) -> None:
    spec = c.get("/api/v1/namespaces/default/services/kubernetes").json()["spec"]
    assert spec["clusterIP"] == "10.100.0.1" and spec["clusterIPs"] == ["10.100.0.1"]
    assert spec["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": api.port}]
    ep = c.get("/api/v1/namespaces/default/endpoints/kubernetes").json()
    assert ep["subsets"][0]["ports"] == [{"name": "https", "port": api.port, "protocol": "TCP"}]
    address = ep["subsets"][0]["addresses"][0]["ip"]
    eps = c.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes").json()
    assert eps["metadata"]["labels"]["kubernetes.io/service-name"] == "kubernetes"
    assert eps["endpoints"][0]["addresses"] == [address] and eps["endpoints"][0]["conditions"]["ready"] is True
    # Deleted by a user, it comes back: the API server reconciles it.
    assert c.delete("/api/v1/namespaces/default/endpoints/kubernetes").status_code == 200
    eventually_sync(lambda: c.get("/api/v1/namespaces/default/endpoints/kubernetes").status_code == 200,
                    timeout=20, message="kubernetes endpoints recreated")


def test_requested_ip_is_honoured_once_and_checked_against_the_range(c: httpx.Client, ns: str) -> None:
    first = create(c, ns, svc("fixed", clusterIP="10.100.0.5"))
    assert first.status_code == 201 and first.json()["spec"]["clusterIPs"] == ["10.100.0.5"], first.text
    assert causes(create(c, ns, svc("again", clusterIP="10.100.0.5"))) == {
        "spec.clusterIPs": 'Invalid value: []string{"10.100.0.5"}: failed to allocate IP 10.100.0.5: '
                           "provided IP is already allocated"}
    assert causes(create(c, ns, svc("outside", clusterIP="10.200.0.5"))) == {
        "spec.clusterIPs": 'Invalid value: []string{"10.200.0.5"}: failed to allocate IP 10.200.0.5: the provided '
                           "IP (10.200.0.5) is not in the valid range. The range of valid IPs is 10.100.0.0/28"}
    assert causes(c.patch(f"/api/v1/namespaces/{ns}/services/fixed", json={"spec": {"clusterIP": "10.100.0.6"}},
                          headers={"Content-Type": "application/merge-patch+json"}))["spec.clusterIPs[0]"] == \
        'Invalid value: []string{"10.100.0.6"}: may not change once set'
    assert c.delete(f"/api/v1/namespaces/{ns}/services/fixed").status_code == 200
    again = create(c, ns, svc("fixed-again", clusterIP="10.100.0.5"))
    assert again.status_code == 201, again.text
    assert c.delete(f"/api/v1/namespaces/{ns}/services/fixed-again").status_code == 200


def _fill_the_range(c: httpx.Client, ns: str, prefix: str) -> list[str]:
    ips: list[str] = []
    while True:
        resp = create(c, ns, svc(f"{prefix}-{len(ips)}"))
        if resp.status_code != 201:
            assert resp.status_code == 500 and "range is full" in resp.json()["message"], resp.text
            return ips
        ips.append(resp.json()["spec"]["clusterIP"])


def test_addresses_are_unique_across_a_restart_and_released_on_delete(c: httpx.Client, ns: str,
                                                                       api: ApiServerHarness) -> None:
    before = _fill_the_range(c, ns, "a")
    assert len(before) == len(set(before)) and "10.100.0.1" not in before
    api.stop()
    api.start()
    assert create(c, ns, svc("after-restart")).status_code == 500  # nothing was forgotten
    freed = before[3]
    assert c.delete(f"/api/v1/namespaces/{ns}/services/a-3").status_code == 200
    reused = create(c, ns, svc("reused"))
    assert reused.status_code == 201 and reused.json()["spec"]["clusterIP"] == freed, reused.text
    listed = c.get("/api/v1/services").json()["items"]
    held = [s["spec"]["clusterIP"] for s in listed if s["spec"].get("clusterIP") not in (None, "None")]
    assert len(held) == len(set(held)) == 14
    for i in range(len(before)):
        c.delete(f"/api/v1/namespaces/{ns}/services/a-{i}")
    c.delete(f"/api/v1/namespaces/{ns}/services/reused")


def test_headless_and_external_name_take_no_ip(c: httpx.Client, ns: str) -> None:
    headless = create(c, ns, svc("headless", clusterIP="None"))
    assert headless.status_code == 201 and headless.json()["spec"]["clusterIPs"] == ["None"], headless.text
    ext = create(c, ns, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}})
    assert ext.status_code == 201 and "clusterIP" not in ext.json()["spec"], ext.text
    to_cluster_ip = c.put(f"/api/v1/namespaces/{ns}/services/ext", json=svc("ext"))
    assert to_cluster_ip.status_code == 200, to_cluster_ip.text
    ip = to_cluster_ip.json()["spec"]["clusterIP"]
    assert ip.startswith("10.100.0.") and to_cluster_ip.json()["spec"]["ipFamilies"] == ["IPv4"]


def test_node_ports(c: httpx.Client, ns: str) -> None:
    auto = create(c, ns, svc("np", type="NodePort", ports=[{"name": "dns", "port": 53, "protocol": "UDP"},
                                                          {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]))
    assert auto.status_code == 201, auto.text
    ports = auto.json()["spec"]["ports"]
    assert 30000 <= ports[0]["nodePort"] <= 30009 and ports[0]["nodePort"] == ports[1]["nodePort"]
    fixed = create(c, ns, svc("np-fixed", type="NodePort", ports=[{"port": 80, "nodePort": 30001}]))
    if ports[0]["nodePort"] == 30001:
        assert fixed.status_code == 422
        return
    assert fixed.status_code == 201 and fixed.json()["spec"]["ports"][0]["nodePort"] == 30001, fixed.text
    assert causes(create(c, ns, svc("np-dup", type="NodePort", ports=[{"port": 80, "nodePort": 30001}]))) == {
        "spec.ports[0].nodePort": "Invalid value: 30001: provided port is already allocated"}
    assert causes(create(c, ns, svc("np-out", type="NodePort", ports=[{"port": 80, "nodePort": 31000}]))) == {
        "spec.ports[0].nodePort": "Invalid value: 31000: provided port is not in the valid range. The range of "
                                  "valid ports is 30000-30009"}
    # NodePort -> ClusterIP gives the node port back.
    back = c.patch(f"/api/v1/namespaces/{ns}/services/np-fixed", json={"spec": {"type": "ClusterIP"}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert back.status_code == 200 and "nodePort" not in back.json()["spec"]["ports"][0], back.text
    assert "externalTrafficPolicy" not in back.json()["spec"]
    taken = create(c, ns, svc("np-dup", type="NodePort", ports=[{"port": 80, "nodePort": 30001}]))
    assert taken.status_code == 201, taken.text
    # Delete gives node ports back.
    assert c.delete(f"/api/v1/namespaces/{ns}/services/np-dup").status_code == 200
    assert create(c, ns, svc("np-dup2", type="NodePort", ports=[{"port": 80, "nodePort": 30001}])).status_code == 201


def test_dry_run_takes_nothing(c: httpx.Client, ns: str) -> None:
    used = {ip for s in c.get("/api/v1/services").json()["items"] for ip in s["spec"].get("clusterIPs") or []}
    # Other tests of this module took addresses at random: pick one none of them holds.
    free = next(ip for ip in (f"10.100.0.{i}" for i in range(14, 1, -1)) if ip not in used)
    dry = c.post(f"/api/v1/namespaces/{ns}/services?dryRun=All", json=svc("dry", clusterIP=free))
    assert dry.status_code == 201 and dry.json()["spec"]["clusterIP"] == free, dry.text
    real = create(c, ns, svc("dry", clusterIP=free))
    assert real.status_code == 201, real.text


