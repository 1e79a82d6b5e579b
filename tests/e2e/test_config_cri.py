"""Real containers consume ConfigMaps, Secrets and volumes.

One `picokube up --runtime cri` node: a pod prints a ConfigMap's and a Secret's values from
its environment and from mounted files (`kubectl logs`); an update to the ConfigMap reaches
the mounted file (`kubectl exec cat`, polled); a missing Secret holds a pod in
CreateContainerConfigError; two containers share an emptyDir, one of them through a subPath.
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

_CONTAINER = {"image": "busybox", "imagePullPolicy": "IfNotPresent"}


def _apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))


def _pod(ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"terminationGracePeriodSeconds": 1, **spec}}


def test_config_map_and_secret_reach_env_and_files_and_updates_follow(cluster: Cluster, ns: str) -> None:
    cluster.kubectl_ok("create", "configmap", "settings", "-n", ns, "--from-literal=mode=fast")
    cluster.kubectl_ok("create", "secret", "generic", "creds", "-n", ns, "--from-literal=password=s3cret")
    script = ('echo "env mode=$MODE password=$PASSWORD"; echo "file mode=$(cat /etc/config/mode) '
              'password=$(cat /etc/secret/password)"; exec sleep 3600')
    _apply(cluster, _pod(ns, "reader", {
        "containers": [{**_CONTAINER, "name": "app", "command": ["sh", "-c", script],
                        "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
                                {"name": "PASSWORD",
                                 "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}}],
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/config"},
                                         {"name": "secret", "mountPath": "/etc/secret", "readOnly": True}]}],
        "volumes": [{"name": "config", "configMap": {"name": "settings"}},
                    {"name": "secret", "secret": {"secretName": "creds"}}]}))
    cluster.kubectl_ok("wait", "--for=condition=Ready", "pod/reader", "-n", ns, "--timeout=120s", timeout=130)

    def printed() -> str | None:
        out = cluster.kubectl_ok("logs", "reader", "-n", ns)
        return out if "file mode=" in out else None
    out = eventually_sync(printed, timeout=30, interval=0.5, message="the pod's output")
    assert "env mode=fast password=s3cret" in out and "file mode=fast password=s3cret" in out, out

    cluster.kubectl_ok("patch", "configmap", "settings", "-n", ns, "-p", '{"data":{"mode":"slow"}}')

    def updated() -> bool:
        return cluster.kubectl_ok("exec", "reader", "-n", ns, "--", "cat", "/etc/config/mode") == "slow"
    eventually_sync(updated, timeout=60, interval=1.0, message="the updated ConfigMap in the mounted file")
    written = cluster.kubectl("exec", "reader", "-n", ns, "--", "sh", "-c", "echo x > /etc/config/new")
    assert written.returncode != 0  # configMap volumes are read-only


def test_missing_secret_holds_the_pod_in_create_container_config_error(cluster: Cluster, ns: str) -> None:
    _apply(cluster, _pod(ns, "needs-secret", {"containers": [{
        **_CONTAINER, "name": "app", "command": ["sh", "-c", "exec sleep 3600"],
        "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "token"}}}]}]}))

    def waiting() -> dict[str, Any] | None:
        pod = json.loads(cluster.kubectl_ok("get", "pod", "needs-secret", "-n", ns, "-o", "json"))
        statuses = pod.get("status", {}).get("containerStatuses") or []
        state = statuses[0].get("state", {}).get("waiting") if statuses else None
        return state if state and state.get("reason") == "CreateContainerConfigError" else None
    state = eventually_sync(waiting, timeout=90, interval=0.5, message="CreateContainerConfigError")
    assert state["message"] == 'secret "absent" not found'


def test_containers_share_an_empty_dir_also_through_a_sub_path(cluster: Cluster, ns: str) -> None:
    _apply(cluster, _pod(ns, "shared", {
        "containers": [
            {**_CONTAINER, "name": "writer",
             "command": ["sh", "-c", "mkdir -p /data/logs && echo hello > /data/logs/greeting && exec sleep 3600"],
             "volumeMounts": [{"name": "scratch", "mountPath": "/data"}]},
            {**_CONTAINER, "name": "reader", "command": ["sh", "-c", "exec sleep 3600"],
             "volumeMounts": [{"name": "scratch", "mountPath": "/logs", "subPath": "logs"},
                              {"name": "memory", "mountPath": "/fast"}]}],
        "volumes": [{"name": "scratch", "emptyDir": {}},
                    {"name": "memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}}]}))
    cluster.kubectl_ok("wait", "--for=condition=Ready", "pod/shared", "-n", ns, "--timeout=120s", timeout=130)

    def greeting() -> bool:
        got = cluster.kubectl("exec", "shared", "-c", "reader", "-n", ns, "--", "cat", "/logs/greeting")
        return got.returncode == 0 and got.stdout == "hello\n"
    eventually_sync(greeting, timeout=30, interval=0.5, message="the writer's file through the subPath")
    mounts = cluster.kubectl_ok("exec", "shared", "-c", "reader", "-n", ns, "--", "cat", "/proc/mounts")
    fast = [line for line in mounts.splitlines() if " /fast " in line]
    assert fast and fast[0].startswith("tmpfs "), mounts
