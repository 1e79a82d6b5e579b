"""Persistent storage on real containers: what a claim holds outlives the pod that wrote it.

One `picokube up --runtime cri` node with its default `standard` class (local-path,
WaitForFirstConsumer): a claim is provisioned when its first pod is scheduled, the pod writes
a file into it, the pod is deleted, a second pod on the same claim reads the file back;
deleting the claim while that pod uses it leaves the claim Terminating until the pod is gone.
Needs root, containerd, runc and the CNI plugins; in CI a skip here is a failure.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from picokube.containerd import containerd_available

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no CRI runtime: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "cri")

CLAIM = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def _pod(name: str, script: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                        "command": ["sh", "-c", script], "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}


def _apply(cluster: Cluster, ns: str, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-n", ns, "-f", "-", stdin=json.dumps(doc))


def test_data_on_a_claim_outlives_its_pod_and_a_claim_in_use_waits(cluster: Cluster, ns: str) -> None:
    _apply(cluster, ns, CLAIM)
    phase = cluster.kubectl_ok("get", "pvc", "data", "-n", ns, "-o", "jsonpath={.status.phase}")
    assert phase == "Pending", "WaitForFirstConsumer: nothing is provisioned before a pod uses the claim"
    _apply(cluster, ns, _pod("writer", "echo kept-$(hostname) > /data/note && exec sleep 3600"))
    cluster.kubectl_ok("wait", "-n", ns, "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=120s",
                       timeout=130)
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=Ready", "pod/writer", "--timeout=120s", timeout=130)
    eventually_sync(lambda: cluster.kubectl_ok("exec", "-n", ns, "writer", "--", "cat", "/data/note").strip()
                    == "kept-writer", timeout=30, message="the writer's file")
    cluster.kubectl_ok("delete", "pod", "writer", "-n", ns, "--wait=true", "--timeout=60s", timeout=70)

    _apply(cluster, ns, _pod("reader", "cat /data/note && exec sleep 3600"))
    cluster.kubectl_ok("wait", "-n", ns, "--for=condition=Ready", "pod/reader", "--timeout=120s", timeout=130)
    out = eventually_sync(lambda: cluster.kubectl_ok("logs", "reader", "-n", ns).strip() or None, timeout=30,
                          message="the reader's output")
    assert out == "kept-writer"

    cluster.kubectl_ok("delete", "pvc", "data", "-n", ns, "--wait=false")
    claim = json.loads(cluster.kubectl_ok("get", "pvc", "data", "-n", ns, "-o", "json"))
    assert claim["metadata"].get("deletionTimestamp"), "the claim is being deleted"
    assert "kubernetes.io/pvc-protection" in claim["metadata"]["finalizers"], "but held while the reader uses it"
    assert cluster.kubectl_ok("exec", "-n", ns, "reader", "--", "cat", "/data/note").strip() == "kept-writer"
    cluster.kubectl_ok("delete", "pod", "reader", "-n", ns, "--wait=true", "--timeout=60s", timeout=70)
    cluster.kubectl_ok("wait", "-n", ns, "--for=delete", "pvc/data", "--timeout=60s", timeout=70)
