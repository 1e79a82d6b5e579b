"""Real nodes: the proxy programs iptables so a ClusterIP and a NodePort reach ready pods.

Two CRI nodes on this host (`picokube up --runtime cri`), which share the host's network
namespace: one of their proxies programs it. The first test writes the EndpointSlices of a
selector-less Service itself, so it checks the proxy alone. Needs
root, containerd, runc, the CNI plugins, busybox-static and iptables; in CI a skip here is a
failure.
"""

from __future__ import annotations

import functools
import json
import subprocess
import urllib.request
from collections import Counter
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from picokube.containerd import containerd_available
from proxy.iptables.runner import iptables_available

_PROBLEM = containerd_available() or (iptables_available() if containerd_available() is None else None)
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no real nodes with iptables: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "2", "--runtime", "cri")
CLUSTER_IP, NODE_PORT = "10.96.200.10", 30180


def apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))


def pod(name: str, ns: str, command: str, *, node: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1, "containers": [{
                "name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", command]}]}}


def pod_ip(cluster: Cluster, ns: str, name: str) -> str:
    def running() -> str | None:
        p = json.loads(cluster.kubectl_ok("get", "pod", name, "-n", ns, "-o", "json"))
        ready = p["status"].get("phase") == "Running" and all(
            c.get("ready") for c in p["status"].get("containerStatuses") or [{}])
        return str(p["status"]["podIP"]) if ready else None
    return eventually_sync(running, timeout=90, interval=0.3, message=f"{name} Running")


def endpoint_slice(ns: str, ready: dict[str, bool]) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": "web-x1", "namespace": ns, "labels": {"kubernetes.io/service-name": "web"}},
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": [ip], "conditions": {"ready": r}} for ip, r in ready.items()]}


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=3) as r:
            return str(r.read().decode().strip())
    except OSError:
        return None


def host_address() -> str:
    """This host's own address on its main interface (not a pod bridge)."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        ifname, address = line.split()[1], line.split()[3].split("/")[0]
        if not ifname.startswith(("pkbr", "docker", "br-", "cni", "veth")):
            return address
    raise AssertionError(f"no host address in {out!r}")


def nat_rules() -> str:
    return subprocess.run(["iptables-save", "-t", "nat"], capture_output=True, text=True, check=True).stdout


def test_cluster_ip_and_node_port_reach_ready_pods_until_the_service_is_deleted(cluster: Cluster, ns: str) -> None:
    serve = "mkdir -p /tmp/www && hostname > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"
    apply(cluster, pod("web-1", ns, serve, node="node-1", labels={"app": "web"}))
    apply(cluster, pod("web-2", ns, serve, node="node-2", labels={"app": "web"}))
    ips = {"web-1": pod_ip(cluster, ns, "web-1"), "web-2": pod_ip(cluster, ns, "web-2")}
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns}, "spec": {
        # No selector: the EndpointSlice controller leaves its endpoints to us.
        "type": "NodePort", "clusterIP": CLUSTER_IP,
        "ports": [{"name": "http", "port": 80, "targetPort": 8080, "nodePort": NODE_PORT}]}})
    apply(cluster, endpoint_slice(ns, {ips["web-1"]: True, ips["web-2"]: True}))

    # From the host: the cluster IP, the NodePort on loopback and on the host's own address.
    urls = [f"http://{CLUSTER_IP}/", f"http://127.0.0.1:{NODE_PORT}/", f"http://{host_address()}:{NODE_PORT}/"]
    for url in urls:
        eventually_sync(functools.partial(fetch, url), timeout=30, interval=0.3, message=f"{url} answers")
    seen = Counter(fetch(urls[0]) for _ in range(40))
    assert set(seen) == {"web-1", "web-2"}, seen  # spread over both endpoints

    # From a pod on the other node, through the cluster IP and the NodePort.
    # busybox's nc, not its wget: the static busybox's wget crashes in some builds.
    client = ("get() { printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 $1 $2 | tail -n 1; }; "
              f"while true; do echo ip=$(get {CLUSTER_IP} 80); echo np=$(get {host_address()} {NODE_PORT}); "
              "sleep 0.2; done")
    apply(cluster, pod("client", ns, client, node="node-2"))
    pod_ip(cluster, ns, "client")

    def client_saw_both() -> set[str] | None:
        lines = set(cluster.kubectl_ok("logs", "client", "-n", ns).split())
        wanted = {"ip=web-1", "ip=web-2", "np=web-1", "np=web-2"}
        return lines if wanted <= lines else None
    eventually_sync(client_saw_both, timeout=60, interval=1, message="the client pod reaches both pods both ways")

    # web-2 turns not ready: new connections go to web-1 only.
    apply(cluster, endpoint_slice(ns, {ips["web-1"]: True, ips["web-2"]: False}))
    eventually_sync(lambda: f"--to-destination {ips['web-2']}:8080" not in nat_rules(), timeout=30, interval=0.3,
                    message="web-2 unprogrammed")
    assert Counter(fetch(url) for url in urls * 10) == Counter({"web-1": 30})

    # Deleting the Service removes its rules, and its cluster IP answers no more.
    cluster.kubectl_ok("delete", "service", "web", "-n", ns)
    eventually_sync(lambda: f"{ns}/web:http" not in nat_rules(), timeout=30, interval=0.3,
                    message="the Service's rules removed")
    assert fetch(urls[0]) is None and fetch(urls[1]) is None


def test_a_pod_that_turns_not_ready_stops_receiving_through_the_controllers_slices(cluster: Cluster, ns: str) -> None:
    """The whole chain: the EndpointSlice controller follows readiness, the proxy follows the slices."""
    # Each pod serves its name and, at /cgi-bin/down, removes the file its readiness probe reads.
    cgi = "/tmp/www/cgi-bin/down"
    serve = (f"mkdir -p /tmp/www/cgi-bin && hostname > /tmp/www/index.html && touch /tmp/ready && "
             f"echo '#!/bin/sh' > {cgi} && echo 'rm -f /tmp/ready; echo Content-Type: text/plain; echo; echo ok' "
             f">> {cgi} && chmod +x {cgi} && exec httpd -f -p 8080 -h /tmp/www")
    probe = {"exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1, "failureThreshold": 1}
    ips = {}
    for name, node in (("echo-1", "node-1"), ("echo-2", "node-2")):
        doc = pod(name, ns, serve, node=node, labels={"app": "echo"})
        doc["spec"]["containers"][0]["readinessProbe"] = probe
        apply(cluster, doc)
        ips[name] = pod_ip(cluster, ns, name)
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo", "namespace": ns},
                    "spec": {"selector": {"app": "echo"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    service = json.loads(cluster.kubectl_ok("get", "service", "echo", "-n", ns, "-o", "json"))
    url = f"http://{service['spec']['clusterIP']}/"

    def both() -> bool:
        return {fetch(url) for _ in range(20)} == {"echo-1", "echo-2"}
    eventually_sync(both, timeout=60, interval=0.5, message="the cluster IP reaches both ready pods")

    assert fetch(f"http://{ips['echo-2']}:8080/cgi-bin/down") == "ok"
    eventually_sync(lambda: f"--to-destination {ips['echo-2']}:8080" not in nat_rules(), timeout=30, interval=0.3,
                    message="echo-2 out of the rules once not Ready")
    # The rules are rewritten as a whole; the next requests land on echo-1 alone.
    eventually_sync(lambda: {fetch(url) for _ in range(20)} == {"echo-1"}, timeout=15, interval=0.3,
                    message="the cluster IP reaches only the ready pod")


def test_pods_on_both_nodes_reach_a_deployment_by_its_name(cluster: Cluster, ns: str) -> None:
    """Cluster DNS through the proxy: resolv.conf names 10.96.0.10, which the proxy sends to the DNS."""
    serve = "mkdir -p /tmp/www && hostname > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                "name": "web", "image": "busybox", "imagePullPolicy": "IfNotPresent", "command": ["sh", "-c", serve],
                "ports": [{"name": "http", "containerPort": 8080}],
                "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1}}]}}}}
    apply(cluster, web)
    cluster.kubectl_ok("expose", "deployment", "web", "-n", ns, "--port", "80", "--target-port", "http")
    apply(cluster, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "peers", "namespace": ns},
                    "spec": {"clusterIP": "None", "selector": {"app": "web"}, "ports": [{"port": 8080}]}})
    cluster_ip = json.loads(cluster.kubectl_ok("get", "svc", "web", "-n", ns, "-o", "json"))["spec"]["clusterIP"]
    name = f"web.{ns}.svc.cluster.local"
    # busybox's own resolver (nslookup) finds the address; nc then connects to it.
    client = ("get() { printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 $1 $2 | tail -n 1; }; "
              "resolve() { nslookup $1 | awk '/^Address/ {a=$NF} END {print a}'; }; "
              f"while true; do echo dns=$(resolve {name}); echo byname=$(get $(resolve {name}) 80); "
              f"echo short=$(get $(resolve web) 80); echo ip=$(get {cluster_ip} 80); "
              f"for a in $(nslookup peers.{ns}.svc.cluster.local | awk '/^Address/ {{print $NF}}' | tail -n +2); "
              "do echo peer=$a; done; sleep 0.5; done")
    for node in ("node-1", "node-2"):
        apply(cluster, pod(f"client-{node}", ns, client, node=node))
    pods = json.loads(cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "app=web", "-o", "json"))["items"]
    names = {p["metadata"]["name"] for p in pods}
    assert len(names) == 2

    def reached(node: str) -> set[str] | None:
        lines = set(cluster.kubectl_ok("logs", f"client-{node}", "-n", ns).split())
        ips = {p["status"].get("podIP") for p in json.loads(
            cluster.kubectl_ok("get", "pods", "-n", ns, "-l", "app=web", "-o", "json"))["items"]}
        wanted = {f"dns={cluster_ip}", *(f"{how}={n}" for how in ("byname", "short", "ip") for n in names),
                  *(f"peer={ip}" for ip in ips)}
        return lines if wanted <= lines else None

    for node in ("node-1", "node-2"):
        eventually_sync(functools.partial(reached, node), timeout=90, interval=1,
                        message=f"a pod on {node} reaches both web pods by name, short name and cluster IP")

    # Scaling changes the endpoints; deleting the Service frees its address for another.
    cluster.kubectl_ok("scale", "deployment", "web", "-n", ns, "--replicas", "3")
    eventually_sync(lambda: len(json.loads(cluster.kubectl_ok(
        "get", "endpointslices", "-n", ns, "-l", "kubernetes.io/service-name=web", "-o", "json"))["items"][0]
        .get("endpoints") or []) == 3, timeout=60, interval=0.5, message="three endpoints")
    cluster.kubectl_ok("delete", "service", "web", "-n", ns)
    eventually_sync(lambda: f"{ns}/web" not in nat_rules(), timeout=30, interval=0.3, message="rules removed")
    again = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "again", "namespace": ns},
             "spec": {"clusterIP": cluster_ip, "selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}
    apply(cluster, again)  # the freed address is given out again


def test_down_removes_every_rule(cluster: Cluster) -> None:
    """Last in the module: `down` (which the fixture repeats harmlessly) leaves no KUBE- chain."""
    status = json.loads(cluster.picokube("status", "-o", "json").stdout)
    proxies = [c for c in status["components"] if c["name"].startswith("kube-proxy-")]
    assert [c["name"] for c in proxies] == ["kube-proxy-node-1", "kube-proxy-node-2"]
    assert all(c["alive"] for c in proxies)
    reports = [json.loads((cluster.data_dir / "proxy" / f"{n}.json").read_text()) for n in ("node-1", "node-2")]
    assert sorted(r["programming"] for r in reports) == [False, True]  # one writer for the shared namespace
    assert "KUBE-SERVICES" in nat_rules()
    assert cluster.picokube("down").returncode == 0
    assert "KUBE-" not in nat_rules()
    filter_rules = subprocess.run(["iptables-save", "-t", "filter"], capture_output=True, text=True,
                                  check=True).stdout
    assert "KUBE-" not in filter_rules

