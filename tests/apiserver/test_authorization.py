"""Who may do what: identities x verbs x resources against Node,RBAC authorization, for real."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness

NS = "authz"


def http(api: ApiServerHarness, token: str | None) -> httpx.Client:
    import ssl
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                        headers=headers, timeout=10)


def pod(name: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def world(api: ApiServerHarness) -> dict[str, str]:
    """A namespace with a pod on each node, a ServiceAccount bound to a pod-reader Role, and its token."""
    with http(api, api.token("admin")) as admin:
        admin.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
        for name, node in (("on-1", "node-1"), ("on-2", "node-2")):
            assert admin.post(f"/api/v1/namespaces/{NS}/pods", json=pod(name, node)).status_code == 201
        admin.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "reader"}})
        admin.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles", json={
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]})
        admin.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", json={
            "metadata": {"name": "reader-reads"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": NS}]})
        resp = admin.post(f"/api/v1/namespaces/{NS}/serviceaccounts/reader/token",
                          json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                "spec": {"expirationSeconds": 3600}})
        assert resp.status_code == 201, resp.text
        return {"sa": resp.json()["status"]["token"]}


# (identity, method, path, body, expected status)
MATRIX: list[tuple[str, str, str, Any, int]] = [
    ("admin", "GET", f"/api/v1/namespaces/{NS}/pods", None, 200),
    ("admin", "DELETE", "/api/v1/nodes/nope", None, 404),
    ("controller-manager", "POST", f"/api/v1/namespaces/{NS}/pods", pod("cm-made"), 201),
    ("controller-manager", "GET", "/api/v1/secrets", None, 200),
    ("controller-manager", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     {"metadata": {"name": "x"}, "rules": []}, 403),
    ("scheduler", "POST", f"/api/v1/namespaces/{NS}/pods/on-1/binding",
     {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "on-1"}, "target": {"name": "node-1"}}, 409),
    ("scheduler", "POST", f"/api/v1/namespaces/{NS}/pods", pod("sched-made"), 403),
    ("scheduler", "DELETE", "/api/v1/nodes/node-1", None, 403),
    ("node-1", "GET", f"/api/v1/namespaces/{NS}/pods", None, 200),
    ("node-1", "PATCH", f"/api/v1/namespaces/{NS}/pods/on-1/status", {"status": {"phase": "Running"}}, 200),
    ("node-1", "PATCH", f"/api/v1/namespaces/{NS}/pods/on-2/status", {"status": {"phase": "Running"}}, 403),
    ("node-2", "PATCH", f"/api/v1/namespaces/{NS}/pods/on-2/status", {"status": {"phase": "Running"}}, 200),
    ("node-1", "POST", "/api/v1/nodes", {"metadata": {"name": "node-1"}}, 201),
    ("node-1", "PATCH", "/api/v1/nodes/node-1/status", {"status": {"capacity": {"pods": "10"}}}, 200),
    ("node-2", "PATCH", "/api/v1/nodes/node-1/status", {"status": {"capacity": {"pods": "1"}}}, 403),
    ("node-1", "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
     {"metadata": {"name": "node-1"}, "spec": {"holderIdentity": "node-1"}}, 201),
    ("node-1", "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
     {"metadata": {"name": "node-2"}, "spec": {"holderIdentity": "node-1"}}, 403),
    ("node-1", "GET", "/api/v1/secrets", None, 403),
    ("node-1", "GET", "/api/v1/persistentvolumes", None, 200),
    ("node-1", "DELETE", "/api/v1/persistentvolumes/any", None, 403),
    ("scheduler", "PATCH", f"/api/v1/namespaces/{NS}/persistentvolumeclaims/none", {"metadata": {}}, 404),
    ("controller-manager", "POST", "/apis/storage.k8s.io/v1/storageclasses",
     {"metadata": {"name": "cm-class"}, "provisioner": "example.com/x"}, 201),
    ("node-1", "POST", f"/api/v1/namespaces/{NS}/pods", pod("node-made"), 403),
    ("sa", "GET", f"/api/v1/namespaces/{NS}/pods", None, 200),
    ("sa", "GET", f"/api/v1/namespaces/{NS}/pods/on-1", None, 200),
    ("sa", "GET", "/api/v1/namespaces/default/pods", None, 403),
    ("sa", "DELETE", f"/api/v1/namespaces/{NS}/pods/on-1", None, 403),
    ("sa", "GET", "/apis", None, 200),
    ("unknown", "GET", f"/api/v1/namespaces/{NS}/pods", None, 401),
    ("anonymous", "GET", f"/api/v1/namespaces/{NS}/pods", None, 401),
    ("anonymous", "GET", "/api", None, 401),
    ("anonymous", "GET", "/readyz", None, 200),
    ("anonymous", "GET", "/version", None, 200),
]


@pytest.mark.parametrize("identity,method,path,body,expected", MATRIX,
                         ids=[f"{m[0]}-{m[1]}-{m[2]}" for m in MATRIX])
def test_matrix(api: ApiServerHarness, world: dict[str, str], identity: str, method: str, path: str,
                body: Any, expected: int) -> None:
    token = {"sa": world["sa"], "unknown": "not-a-token", "anonymous": None}.get(identity) \
        if identity in ("sa", "unknown", "anonymous") else api.token(identity)
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    with http(api, token) as c:
        resp = c.request(method, path, json=body, headers=headers)
    assert resp.status_code == expected, resp.text
    if expected == 403:
        status = resp.json()
        assert status["reason"] == "Forbidden" and " is forbidden: " in status["message"]


def test_forbidden_wording(api: ApiServerHarness, world: dict[str, str]) -> None:
    with http(api, world["sa"]) as c:
        msg = c.get("/api/v1/namespaces/default/pods").json()["message"]
    assert msg == ('pods is forbidden: User "system:serviceaccount:authz:reader" cannot list resource "pods" in '
                   'API group "" in the namespace "default"')
    with http(api, world["sa"]) as c:
        log = c.get(f"/api/v1/namespaces/{NS}/pods/on-1/log").json()
    # The subject is the resource; the subresource shows in the resource asked for, as upstream words it.
    assert log["message"] == ('pods "on-1" is forbidden: User "system:serviceaccount:authz:reader" cannot get resource '
                              f'"pods/log" in API group "" in the namespace "{NS}"')


def test_a_deleted_service_account_token_stops_working(api: ApiServerHarness) -> None:
    with http(api, api.token("admin")) as admin:
        admin.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "short"}})
        token = admin.post(f"/api/v1/namespaces/{NS}/serviceaccounts/short/token", json={}).json()["status"]["token"]
        with http(api, token) as sa:
            assert sa.get("/apis").status_code == 200
            admin.delete(f"/api/v1/namespaces/{NS}/serviceaccounts/short")
            import time
            deadline = time.monotonic() + 10
            while sa.get("/apis").status_code != 401 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert sa.get("/apis").status_code == 401


def kubectl(api: ApiServerHarness, tmp: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--token", token] if token else []
    return subprocess.run(["kubectl", "--kubeconfig", str(api.kubeconfig()), "--cache-dir", str(tmp), *extra, *args],
                          capture_output=True, text=True, timeout=60)


def test_kubectl_create_token_auth_can_i_and_forbidden(api: ApiServerHarness, world: dict[str, str],
                                                        tmp_path: Path) -> None:
    out = kubectl(api, tmp_path, "create", "token", "reader", "-n", NS)
    assert out.returncode == 0, out.stderr
    token = out.stdout.strip()
    assert token.count(".") == 2
    can = kubectl(api, tmp_path, "auth", "can-i", "list", "pods", "-n", NS, token=token)
    assert can.returncode == 0 and can.stdout.strip() == "yes", can.stdout + can.stderr
    cannot = kubectl(api, tmp_path, "auth", "can-i", "delete", "pods", "-n", NS, token=token)
    assert cannot.returncode == 1 and cannot.stdout.strip() == "no"
    denied = kubectl(api, tmp_path, "get", "pods", "-n", "default", token=token)
    assert denied.returncode == 1
    assert ('Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:authz:reader" cannot '
            'list resource "pods" in API group "" in the namespace "default"') in denied.stderr
