"""ConfigMaps and Secrets reach pods on simulated nodes, through the whole cluster and kubectl.

A pod whose env names a missing ConfigMap waits in CreateContainerConfigError (with the
kubelet's Failed event) and starts once the ConfigMap is created; a pod whose volume names a
missing Secret stays ContainerCreating with a FailedMount event, then runs and shows the
Secret's value through `kubectl exec cat`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

_CONTAINER = {"name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 3600"]}


def _apply(cluster: Cluster, doc: dict[str, Any]) -> None:
    cluster.kubectl_ok("apply", "-f", "-", stdin=json.dumps(doc))


def _pod(ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"terminationGracePeriodSeconds": 0, **spec}}


def _waiting_reason(cluster: Cluster, ns: str, name: str) -> str | None:
    pod = json.loads(cluster.kubectl_ok("get", "pod", name, "-n", ns, "-o", "json"))
    for cs in pod.get("status", {}).get("containerStatuses") or []:
        return str(cs.get("state", {}).get("waiting", {}).get("reason") or "") or None
    return None


def _event(cluster: Cluster, ns: str, reason: str, message: str) -> bool:
    events = json.loads(cluster.kubectl_ok("get", "events", "-n", ns, "-o", "json"))["items"]
    return any(e.get("reason") == reason and e.get("message") == message for e in events)


def test_missing_config_map_holds_the_container_until_created(cluster: Cluster, ns: str) -> None:
    _apply(cluster, _pod(ns, "env", {"containers": [{**_CONTAINER, "env": [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}}]}]}))
    eventually_sync(lambda: _waiting_reason(cluster, ns, "env") == "CreateContainerConfigError", timeout=60,
                    interval=0.5, message="CreateContainerConfigError")
    eventually_sync(lambda: _event(cluster, ns, "Failed", 'Error: configmap "settings" not found'), timeout=30,
                    interval=0.5, message="the kubelet's Failed event")
    cluster.kubectl_ok("create", "configmap", "settings", "-n", ns, "--from-literal=mode=fast")
    cluster.kubectl_ok("wait", "--for=condition=Ready", "pod/env", "-n", ns, "--timeout=60s", timeout=70)
    assert cluster.kubectl_ok("exec", "env", "-n", ns, "--", "printenv", "MODE").strip() == "fast"


def test_missing_secret_volume_fails_mount_until_created(cluster: Cluster, ns: str) -> None:
    _apply(cluster, _pod(ns, "vol", {
        "containers": [{**_CONTAINER, "volumeMounts": [{"name": "creds", "mountPath": "/etc/creds"}]}],
        "volumes": [{"name": "creds", "secret": {"secretName": "creds"}}]}))
    eventually_sync(lambda: _event(cluster, ns, "FailedMount",
                                   'MountVolume.SetUp failed for volume "creds" : secret "creds" not found'),
                    timeout=60, interval=0.5, message="a FailedMount event")
    assert _waiting_reason(cluster, ns, "vol") == "ContainerCreating"
    cluster.kubectl_ok("create", "secret", "generic", "creds", "-n", ns, "--from-literal=password=s3cret")
    cluster.kubectl_ok("wait", "--for=condition=Ready", "pod/vol", "-n", ns, "--timeout=60s", timeout=70)
    assert cluster.kubectl_ok("exec", "vol", "-n", ns, "--", "cat", "/etc/creds/password") == "s3cret"
    assert cluster.kubectl_ok("exec", "vol", "-n", ns, "--", "ls", "/etc/creds") == "password\n"
