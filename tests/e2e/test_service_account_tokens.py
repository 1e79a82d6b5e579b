"""ServiceAccount credentials in a whole cluster: a pod created right after its namespace gets the
`kube-api-access-*` volume, and a token bound to it with the real kubectl authenticates as that pod
until the pod is gone."""

from __future__ import annotations

import json
import uuid

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

CLUSTER_ARGS = ("--nodes", "1", "--runtime", "simulated")
MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def test_a_pod_of_a_fresh_namespace_gets_its_credentials_and_a_bound_token(cluster: Cluster) -> None:
    ns = f"sa-{uuid.uuid4().hex[:6]}"
    cluster.kubectl_ok("create", "namespace", ns)
    # No wait for the default account: admission waits for its controller, as upstream's does.
    cluster.kubectl_ok("run", "web", "-n", ns, "--image", "busybox", "--restart", "Never")
    pod = json.loads(cluster.kubectl_ok("get", "pod", "web", "-n", ns, "-o", "json"))
    [volume] = [v for v in pod["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]
    assert [s for source in volume["projected"]["sources"] for s in source] == [
        "serviceAccountToken", "configMap", "downwardAPI"]
    assert {"name": volume["name"], "readOnly": True, "mountPath": MOUNT} in pod["spec"]["containers"][0][
        "volumeMounts"]

    token = cluster.kubectl_ok("create", "token", "default", "-n", ns, "--bound-object-kind", "Pod",
                               "--bound-object-name", "web").strip()
    who = json.loads(cluster.kubectl_ok("auth", "whoami", "--token", token, "-o", "json"))["status"]["userInfo"]
    assert who["username"] == f"system:serviceaccount:{ns}:default"
    assert who["extra"]["authentication.kubernetes.io/pod-name"] == ["web"]
    assert who["extra"]["authentication.kubernetes.io/pod-uid"] == [pod["metadata"]["uid"]]

    cluster.kubectl_ok("delete", "pod", "web", "-n", ns, "--wait=true", "--timeout=60s")
    eventually_sync(lambda: cluster.kubectl("auth", "whoami", "--token", token).returncode != 0, timeout=30,
                    message="the token ends with its pod")
    assert "Unauthorized" in cluster.kubectl("auth", "whoami", "--token", token).stderr
