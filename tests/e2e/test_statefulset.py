"""StatefulSets and ReplicationControllers on a whole simulated cluster, through the real
kubectl and pkctl: apply, rollout status and history, table columns, scale and describe.

The simulated kubelets run the pods and report them Ready, so an OrderedReady set comes up
one pod after another by itself.
"""

from __future__ import annotations

import json

import pytest

from kube.testing.cluster import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: web}}
spec:
  replicas: 3
  serviceName: web
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - {{name: nginx, image: {image}}}
"""

RC = """\
apiVersion: v1
kind: ReplicationController
metadata: {name: front}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: front}}
    spec:
      containers:
      - {name: nginx, image: nginx}
"""


def test_statefulset_rollout_with_kubectl_and_pkctl(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=STATEFULSET.format(image="nginx:1.25"))
    out = cluster.kubectl_ok("rollout", "status", "-n", ns, "sts/web", "--timeout", "120s", timeout=150)
    assert "partitioned roll out complete: 3 new pods have been updated..." in out
    listed = cluster.kubectl_ok("get", "-n", ns, "sts", "-o", "wide")
    header, row = listed.splitlines()[:2]
    assert header.split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert row.split()[:2] == ["web", "3/3"] and row.split()[3:] == ["nginx", "nginx:1.25"]
    pods = json.loads(cluster.kubectl_ok("get", "-n", ns, "pods", "-l", "app=web", "-o", "json"))["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1", "web-2"]
    assert {p["spec"]["hostname"]: p["spec"]["subdomain"] for p in pods} == \
        {"web-0": "web", "web-1": "web", "web-2": "web"}

    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=STATEFULSET.format(image="nginx:1.26"))
    cluster.kubectl_ok("rollout", "status", "-n", ns, "sts/web", "--timeout", "120s", timeout=150)
    sts = json.loads(cluster.kubectl_ok("get", "-n", ns, "sts", "web", "-o", "json"))
    status = sts["status"]
    assert (status["updatedReplicas"], status["readyReplicas"]) == (3, 3)
    assert status["currentRevision"] == status["updateRevision"]
    history = cluster.kubectl_ok("rollout", "history", "-n", ns, "sts/web")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    first = cluster.kubectl_ok("rollout", "history", "-n", ns, "sts/web", "--revision", "1")
    assert "nginx:1.25" in first and "nginx:1.26" not in first
    undone = cluster.kubectl_ok("rollout", "undo", "-n", ns, "sts/web")
    assert "statefulset.apps/web rolled back" in undone
    cluster.kubectl_ok("rollout", "status", "-n", ns, "sts/web", "--timeout", "120s", timeout=150)
    images = cluster.kubectl_ok("get", "-n", ns, "pods", "-l", "app=web", "-o",
                                "jsonpath={.items[*].spec.containers[0].image}")
    assert images.split() == ["nginx:1.25"] * 3
    history = cluster.kubectl_ok("rollout", "history", "-n", ns, "sts/web")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]

    got = cluster.pkctl("get", "-n", ns, "sts")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split("\n")[1].split()[:2] == ["web", "3/3"]
    described = cluster.pkctl("describe", "-n", ns, "sts", "web")
    assert described.returncode == 0, described.stderr
    assert "Replicas:" in described.stdout and "3 desired | 3 total" in described.stdout
    assert "Update Strategy:" in described.stdout and "RollingUpdate" in described.stdout
    restarted = cluster.pkctl("rollout", "restart", "-n", ns, "sts/web")
    assert restarted.returncode == 0 and restarted.stdout == "statefulset.apps/web restarted\n", restarted.stderr
    rolled = cluster.pkctl("rollout", "status", "-n", ns, "sts/web", "--timeout", "120s")
    assert rolled.returncode == 0, rolled.stderr
    assert rolled.stdout.splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    stamps = cluster.kubectl_ok("get", "-n", ns, "pods", "-l", "app=web", "-o",
                                "jsonpath={.items[*].metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}")
    assert len(stamps.split()) == 3 and len(set(stamps.split())) == 1, stamps
    pk_history = cluster.pkctl("rollout", "history", "-n", ns, "sts/web")
    assert pk_history.returncode == 0, pk_history.stderr
    assert pk_history.stdout.splitlines()[0] == "statefulset.apps/web "
    assert [line.split()[0] for line in pk_history.stdout.splitlines()[2:] if line.strip()] == ["2", "3", "4"]
    pk_undone = cluster.pkctl("rollout", "undo", "-n", ns, "sts/web")
    assert pk_undone.returncode == 0 and pk_undone.stdout == "statefulset.apps/web rolled back\n", pk_undone.stderr
    rolled = cluster.pkctl("rollout", "status", "-n", ns, "sts/web", "--timeout", "120s")
    assert rolled.returncode == 0, rolled.stderr
    stamps = cluster.kubectl_ok("get", "-n", ns, "pods", "-l", "app=web", "-o",
                                "jsonpath={.items[*].metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}")
    assert stamps.strip() == "", "undo brought back the template from before the restart"
    scaled = cluster.pkctl("scale", "-n", ns, "sts/web", "--replicas", "1")
    assert scaled.returncode == 0, scaled.stderr
    cluster.kubectl_ok("wait", "-n", ns, "--for=delete", "pod/web-1", "pod/web-2", "--timeout", "120s", timeout=150)


def test_replication_controller_scale_with_kubectl_and_pkctl(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=RC)
    out = cluster.kubectl_ok("scale", "-n", ns, "rc/front", "--replicas", "3")
    assert "replicationcontroller/front scaled" in out
    cluster.kubectl_ok("wait", "-n", ns, "rc/front", "--for=jsonpath={.status.readyReplicas}=3",
                       "--timeout", "120s", timeout=150)
    listed = cluster.kubectl_ok("get", "-n", ns, "rc")
    assert listed.splitlines()[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert listed.splitlines()[1].split()[:4] == ["front", "3", "3", "3"]
    scaled = cluster.pkctl("scale", "-n", ns, "rc/front", "--replicas", "1")
    assert scaled.returncode == 0, scaled.stderr
    cluster.kubectl_ok("wait", "-n", ns, "rc/front", "--for=jsonpath={.status.replicas}=1",
                       "--timeout", "120s", timeout=150)
    described = cluster.pkctl("describe", "-n", ns, "rc", "front")
    assert described.returncode == 0, described.stderr
    assert "Selector:" in described.stdout and "app=front" in described.stdout
    assert "1 current / 1 desired" in described.stdout
