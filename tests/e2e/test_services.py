"""Services with the real kubectl and pkctl against `picokube up`: expose a Deployment, list
Services and EndpointSlices wide, describe a Service, cluster-info, and pruning a Service."""

from __future__ import annotations

import re

import pytest

from kube.testing.cluster import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: httpd, image: httpd, ports: [{containerPort: 8080, name: http}]}]}
"""


def test_kubectl_expose_get_wide_and_describe(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=WEB)
    assert cluster.kubectl_ok("expose", "deployment", "web", "-n", ns, "--port", "80", "--target-port", "8080") \
        == "service/web exposed\n"
    out = cluster.kubectl_ok("get", "svc,endpointslices", "-o", "wide", "-n", "default")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    kubernetes = next(line.split() for line in lines if line.startswith("service/kubernetes"))
    assert kubernetes[1:5] == ["ClusterIP", "10.96.0.1", "<none>", "443/TCP"] and kubernetes[-1] == "<none>"
    header = next(line.split() for line in lines if line.startswith("NAME") and "ADDRESSTYPE" in line)
    assert header == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    slice_row = next(line.split() for line in lines if line.startswith("endpointslice.discovery.k8s.io/kubernetes"))
    assert slice_row[1:3] == ["IPv4", str(cluster.port)]
    web = cluster.kubectl_ok("get", "svc", "web", "-o", "wide", "-n", ns).splitlines()[1].split()
    assert web[0] == "web" and web[1] == "ClusterIP" and re.fullmatch(r"10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+",
                                                                       web[2])
    assert web[3:5] == ["<none>", "80/TCP"] and web[-1] == "app=web"
    described = cluster.kubectl_ok("describe", "svc", "web", "-n", ns)
    for label, value in (("Selector", "app=web"), ("Type", "ClusterIP"), ("IP Family Policy", "SingleStack"),
                         ("IP Families", "IPv4"), ("Port", "<unset>  80/TCP"), ("TargetPort", "8080/TCP"),
                         ("Session Affinity", "None"), ("Internal Traffic Policy", "Cluster")):
        assert re.search(rf"^{label}:\s+{re.escape(value)}$", described, re.M), (label, described)
    ep = cluster.kubectl_ok("get", "endpoints", "kubernetes", "-n", "default").splitlines()
    assert ep[0].split() == ["NAME", "ENDPOINTS", "AGE"] and ep[1].split()[1].endswith(f":{cluster.port}")


def test_cluster_info_names_the_control_plane(cluster: Cluster) -> None:
    out = cluster.kubectl_ok("cluster-info")
    assert f"Kubernetes control plane is running at https://127.0.0.1:{cluster.port}" in \
        re.sub(r"\x1b\[[0-9;]*m", "", out)


def test_pkctl_expose_get_and_describe(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=WEB)
    out = cluster.pkctl("-n", ns, "expose", "deploy/web", "--port", "8000", "--target-port", "http",
                        "--type", "NodePort", "--name", "web-np")
    assert out.returncode == 0 and out.stdout == "service/web-np exposed\n", out.stderr
    got = cluster.pkctl("-n", ns, "get", "svc", "web-np", "-o", "wide")
    assert got.returncode == 0, got.stderr
    row = got.stdout.splitlines()[1].split()
    assert row[1] == "NodePort" and re.fullmatch(r"8000:3\d{4}/TCP", row[4]) and row[-1] == "app=web", got.stdout
    described = cluster.pkctl("-n", ns, "describe", "svc", "web-np")
    assert described.returncode == 0, described.stderr
    assert "TargetPort:               http/TCP" in described.stdout and "NodePort:" in described.stdout
    assert "External Traffic Policy:  Cluster" in described.stdout


PRUNE = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: keep, labels: {{set: prune}}}}
{extra}"""
PRUNED_SERVICE = """\
---
apiVersion: v1
kind: Service
metadata: {name: gone, labels: {set: prune}}
spec: {selector: {app: gone}, ports: [{port: 80}]}
"""


def test_apply_prune_removes_a_service(cluster: Cluster, ns: str) -> None:
    # kubectl's default allowlist also names kinds picokube does not serve yet (PersistentVolumeClaim,
    # Job, StatefulSet, ...), which kubectl refuses; an allowlist of served kinds prunes.
    allow = ("--prune-allowlist", "core/v1/Service", "--prune-allowlist", "core/v1/ConfigMap")
    cluster.kubectl_ok("apply", "-n", ns, "-l", "set=prune", "--prune", *allow, "-f", "-",
                       stdin=PRUNE.format(extra=PRUNED_SERVICE))
    out = cluster.kubectl_ok("apply", "-n", ns, "-l", "set=prune", "--prune", *allow, "-f", "-",
                             stdin=PRUNE.format(extra=""))
    assert "service/gone pruned" in out, out
