"""In-cluster configuration against the API server: the official client's in-cluster loader, reading
the files a pod's `kube-api-access-*` volume holds (a token bound to the pod, the cluster CA, the
namespace) and the Service address in its environment, may do what its account's RBAC allows and
nothing more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.config.incluster_config import InClusterConfigLoader

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync


@pytest.fixture(scope="module")
def account(c: httpx.Client, ns: str) -> str:
    """A service account that may list pods in `ns`, and nothing else."""
    c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "lister"}})
    c.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", json={
        "metadata": {"name": "pod-lister"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]})
    c.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", json={
        "metadata": {"name": "lister-lists"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-lister"},
        "subjects": [{"kind": "ServiceAccount", "name": "lister", "namespace": ns}]})
    return "lister"


def service_account_dir(api: ApiServerHarness, c: httpx.Client, ns: str, pod: dict[str, Any], tmp: Path) -> Path:
    """What the kubelet writes for the pod's kube-api-access volume: token, ca.crt, namespace."""
    meta = pod["metadata"]
    resp = c.post(f"/api/v1/namespaces/{ns}/serviceaccounts/{pod['spec']['serviceAccountName']}/token", json={
        "spec": {"expirationSeconds": 3607,
                 "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}}})
    assert resp.status_code == 201, resp.text
    (tmp / "token").write_text(resp.json()["status"]["token"])
    (tmp / "ca.crt").write_bytes(api.pki.ca_cert.read_bytes())
    (tmp / "namespace").write_text(ns)
    return tmp


def test_the_official_in_cluster_config_lists_pods_and_is_refused_the_rest(
        api: ApiServerHarness, c: httpx.Client, ns: str, account: str, tmp_path: Path) -> None:
    created = c.post(f"/api/v1/namespaces/{ns}/pods", json={"metadata": {"name": "client"}, "spec": {
        "serviceAccountName": account, "containers": [{"name": "c", "image": "busybox"}]}})
    assert created.status_code == 201, created.text
    files = service_account_dir(api, c, ns, created.json(), tmp_path)
    environ = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(api.port)}
    configuration = client.Configuration()
    InClusterConfigLoader(token_filename=str(files / "token"), cert_filename=str(files / "ca.crt"),
                          environ=environ).load_and_set(configuration)
    with client.ApiClient(configuration) as api_client:
        core = client.CoreV1Api(api_client)
        namespace = (files / "namespace").read_text()

        def names() -> list[str]:
            return [str(p.metadata.name) for p in core.list_namespaced_pod(namespace).items if p.metadata]
        assert "client" in eventually_sync(names, message="the pod's token lists pods")
        with pytest.raises(ApiException) as refused:
            core.delete_namespaced_pod("client", namespace)
        assert refused.value.status == 403
        message = json.loads(refused.value.body or "{}").get("message", "")
        assert f'User "system:serviceaccount:{ns}:{account}" cannot delete resource "pods"' in message
        with pytest.raises(ApiException) as other:
            core.list_namespaced_pod("default")
        assert other.value.status == 403
