"""ServiceAccount credentials in a whole cluster: a pod created right after its namespace gets the
`kube-api-access-*` volume, and a token bound to it with the real kubectl authenticates as that pod
until the pod is gone."""

from __future__ import annotations

import ipaddress
import json
import uuid

from cryptography import x509

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


def test_the_api_servers_certificate_names_the_kubernetes_service(cluster: Cluster) -> None:
    """What in-cluster clients dial (KUBERNETES_SERVICE_HOST) is what the certificate names."""
    service = json.loads(cluster.kubectl_ok("get", "service", "kubernetes", "-n", "default", "-o", "json"))
    cert = x509.load_pem_x509_certificate((cluster.data_dir / "pki" / "apiserver.crt").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address(service["spec"]["clusterIP"]) in sans.get_values_for_type(x509.IPAddress)
    assert "kubernetes.default.svc" in sans.get_values_for_type(x509.DNSName)
