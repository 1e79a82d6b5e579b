"""A client inside a pod reaches the API server with its own ServiceAccount token.

One `picokube up --runtime cri` node. The pod runs the official Python client with
`config.load_incluster_config()`: `KUBERNETES_SERVICE_HOST/PORT` from the kubelet, the token,
CA and namespace from the `kube-api-access-*` volume the ServiceAccount admission adds, the
connection through the `kubernetes` Service. Its ServiceAccount may list pods in its own
namespace (a Role) and nothing else, so listing kube-system's pods is refused with 403.
The busybox test image has no Python, so the host's interpreter and the client library are
mounted read-only into the container through hostPath volumes.
Needs root, containerd, runc and the CNI plugins; in CI a skip here is a failure.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync
from picokube.containerd import containerd_available

_PROBLEM = containerd_available()
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300),
              pytest.mark.skipif(_PROBLEM is not None, reason=f"no CRI runtime: {_PROBLEM}")]

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "cri")
_LIBRARY = str(Path(kubernetes.__file__).resolve().parent.parent)

SCRIPT = """
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_incluster_config()
v1 = client.CoreV1Api()
ns = open("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read()
print("namespace", ns)
print("pods", " ".join(sorted(p.metadata.name for p in v1.list_namespaced_pod(ns).items)))
try:
    v1.list_namespaced_pod("kube-system")
    print("kube-system allowed")
except ApiException as e:
    print("kube-system refused", e.status)
"""


def _host_paths() -> list[str]:
    """The directories the host's interpreter, its libraries and the client library live in."""
    # /lib and /lib64 are mounted at their own names even where they link into /usr: the
    # interpreter's ELF loader is named by that path.
    wanted = {sys.prefix, sys.base_prefix, "/usr", "/lib", "/lib64", _LIBRARY}
    there = {p for p in wanted if os.path.exists(p)}
    # Nested paths are covered by their parents; the container needs each mounted once.
    return sorted(p for p in there if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in there))


def _pod(ns: str) -> dict[str, Any]:
    paths = _host_paths()
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client", "namespace": ns}, "spec": {
        "serviceAccountName": "lister", "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "client", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                        "command": [sys.executable, "-c", SCRIPT],
                        "env": [{"name": "PYTHONPATH", "value": _LIBRARY}],
                        "volumeMounts": [{"name": f"host-{i}", "mountPath": p, "readOnly": True}
                                         for i, p in enumerate(paths)]}],
        "volumes": [{"name": f"host-{i}", "hostPath": {"path": p, "type": "Directory"}}
                    for i, p in enumerate(paths)]}}


def test_a_pod_lists_pods_with_its_own_token_and_is_refused_the_rest(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("create", "serviceaccount", "lister", "-n", ns)
    cluster.kubectl_ok("create", "role", "pod-lister", "-n", ns, "--verb=list", "--resource=pods")
    cluster.kubectl_ok("create", "rolebinding", "lister", "-n", ns, "--role=pod-lister",
                       f"--serviceaccount={ns}:lister")
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(_pod(ns)))
    pod = json.loads(cluster.kubectl_ok("get", "pod", "client", "-n", ns, "-o", "json"))
    mounts = {m["mountPath"]: m["name"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    assert mounts["/var/run/secrets/kubernetes.io/serviceaccount"].startswith("kube-api-access-")

    def finished() -> str | None:
        phase = cluster.kubectl_ok("get", "pod", "client", "-n", ns, "-o", "jsonpath={.status.phase}")
        return phase if phase in ("Succeeded", "Failed") else None
    phase = eventually_sync(finished, timeout=120, interval=0.5, message="the client pod finished")
    out = cluster.kubectl_ok("logs", "client", "-n", ns)
    assert phase == "Succeeded", out
    assert f"namespace {ns}" in out and "pods client" in out, out
    assert "kube-system refused 403" in out, out
