"""Bound ServiceAccount tokens through the API: TokenRequest's boundObjectRef, what the token
says, who it authenticates as (`kubectl auth whoami`), and its end with its object."""

from __future__ import annotations

import json
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync

EXTRA = "authentication.kubernetes.io/"


@pytest.fixture(scope="module")
def world(c: httpx.Client, ns: str) -> dict[str, Any]:
    """A service account `app`, a node, a pod `web` of `app` on that node, and a secret."""
    assert c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "app"}}).status_code == 201
    node = c.post("/api/v1/nodes", json={"metadata": {"name": f"bound-{ns}"}})
    assert node.status_code == 201, node.text
    pod = {"metadata": {"name": "web"}, "spec": {"serviceAccountName": "app", "nodeName": f"bound-{ns}",
                                                 "containers": [{"name": "c", "image": "busybox"}]}}
    created = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert created.status_code == 201, created.text
    secret = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "s"}})
    assert secret.status_code == 201, secret.text
    return {"pod": created.json(), "node": node.json(), "secret": secret.json()}


def request_token(c: httpx.Client, ns: str, account: str = "app", **spec: Any) -> httpx.Response:
    return c.post(f"/api/v1/namespaces/{ns}/serviceaccounts/{account}/token",
                  json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})


def ref(obj: dict[str, Any], **override: str) -> dict[str, str]:
    return {"apiVersion": "v1", "kind": obj["kind"], "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
            **override}


def claims_of(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


@pytest.fixture
def as_token(api: ApiServerHarness) -> Iterator[Any]:
    clients: list[httpx.Client] = []

    def make(token: str) -> httpx.Client:
        client = httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                              headers={"Authorization": f"Bearer {token}"}, timeout=30)
        clients.append(client)
        return client
    yield make
    for client in clients:
        client.close()


def test_a_pod_bound_token_carries_the_pod_and_its_node(c: httpx.Client, ns: str, world: dict[str, Any]) -> None:
    pod, node = world["pod"], world["node"]
    before = int(time.time())
    resp = request_token(c, ns, boundObjectRef=ref(pod), expirationSeconds=1200)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["spec"]["boundObjectRef"] == ref(pod)
    claims = claims_of(body["status"]["token"])
    assert claims["kubernetes.io"] == {
        "namespace": ns, "serviceaccount": {"name": "app", "uid": claims["kubernetes.io"]["serviceaccount"]["uid"]},
        "pod": {"name": "web", "uid": pod["metadata"]["uid"]},
        "node": {"name": node["metadata"]["name"], "uid": node["metadata"]["uid"]}}
    assert claims["sub"] == f"system:serviceaccount:{ns}:app" and claims["jti"]
    assert before <= claims["iat"] == claims["nbf"] and claims["exp"] == claims["iat"] + 1200


def test_the_kubelets_3607_seconds_are_extended_with_a_warning_time(c: httpx.Client, ns: str,
                                                                      world: dict[str, Any]) -> None:
    resp = request_token(c, ns, boundObjectRef=ref(world["pod"]), expirationSeconds=3607)
    assert resp.status_code == 201, resp.text
    claims = claims_of(resp.json()["status"]["token"])
    assert claims["exp"] == claims["iat"] + 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] == claims["iat"] + 3607
    assert resp.json()["spec"]["expirationSeconds"] == 3607
    unbound = claims_of(request_token(c, ns, expirationSeconds=3607).json()["status"]["token"])
    assert unbound["exp"] == unbound["iat"] + 3607 and "warnafter" not in unbound["kubernetes.io"]


@pytest.mark.parametrize("case", ["uid", "missing", "kind", "other account"])
def test_a_bad_bound_object_reference_is_refused(c: httpx.Client, ns: str, world: dict[str, Any], case: str) -> None:
    pod = world["pod"]
    if case == "uid":
        resp = request_token(c, ns, boundObjectRef=ref(pod, uid="not-the-uid"))
        assert resp.status_code == 409
        assert resp.json()["message"] == (
            'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (not-the-uid) does '
            "not match the UID in record. The object might have been deleted and then recreated")
    elif case == "missing":
        resp = request_token(c, ns, boundObjectRef={"apiVersion": "v1", "kind": "Pod", "name": "nope"})
        assert resp.status_code == 404 and resp.json()["message"] == 'pods "nope" not found'
    elif case == "kind":
        resp = request_token(c, ns, boundObjectRef={"apiVersion": "v1", "kind": "ConfigMap", "name": "x"})
        assert resp.status_code == 400
        assert resp.json()["message"] == "cannot bind token to object of type /v1, Kind=ConfigMap"
    else:
        assert c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "other"}}).status_code \
            in (201, 409)
        resp = request_token(c, ns, "other", boundObjectRef=ref(pod))
        assert resp.status_code == 400
        assert resp.json()["message"] == ('cannot bind token for serviceaccount "other" to pod running with '
                                          "different serviceaccount name.")


def test_whoami_shows_the_pod_and_the_token_ends_with_the_pod(api: ApiServerHarness, c: httpx.Client, ns: str,
                                                              world: dict[str, Any], as_token: Any,
                                                              tmp_path: Path) -> None:
    pod = {"metadata": {"name": "short-lived"}, "spec": {"serviceAccountName": "app",
                                                          "containers": [{"name": "c", "image": "busybox"}]}}
    created = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod).json()
    token = request_token(c, ns, boundObjectRef=ref(created)).json()["status"]["token"]
    me = as_token(token)
    eventually_sync(lambda: me.get("/apis").status_code == 200, message="the bound token authenticates")
    out = subprocess.run(["kubectl", "--kubeconfig", str(api.kubeconfig()), "--cache-dir", str(tmp_path), "--token",
                          token, "auth", "whoami", "-o", "json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    user = json.loads(out.stdout)["status"]["userInfo"]
    assert user["username"] == f"system:serviceaccount:{ns}:app"
    assert user["extra"][EXTRA + "pod-name"] == ["short-lived"]
    assert user["extra"][EXTRA + "pod-uid"] == [created["metadata"]["uid"]]
    assert user["extra"][EXTRA + "credential-id"] == [f"JTI={claims_of(token)['jti']}"]
    assert c.delete(f"/api/v1/namespaces/{ns}/pods/short-lived", params={"gracePeriodSeconds": 0}).status_code == 200
    eventually_sync(lambda: me.get("/apis").status_code == 401, message="the token ends with its pod")
    # A new pod of the same name is another pod: the old token stays dead.
    again = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert again.status_code == 201
    eventually_sync(lambda: c.get(f"/api/v1/namespaces/{ns}/pods/short-lived", params={"resourceVersion": "0"})
                    .json()["metadata"]["uid"] == again.json()["metadata"]["uid"], message="the cache has the new pod")
    assert me.get("/apis").status_code == 401


def test_a_secret_bound_token_ends_with_the_secret(c: httpx.Client, ns: str, world: dict[str, Any],
                                                   as_token: Any) -> None:
    secret = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "binder"}}).json()
    resp = request_token(c, ns, boundObjectRef=ref(secret))
    assert resp.status_code == 201, resp.text
    token = resp.json()["status"]["token"]
    assert claims_of(token)["kubernetes.io"]["secret"] == {"name": "binder", "uid": secret["metadata"]["uid"]}
    me = as_token(token)
    eventually_sync(lambda: me.get("/apis").status_code == 200, message="the bound token authenticates")
    assert c.delete(f"/api/v1/namespaces/{ns}/secrets/binder").status_code == 200
    eventually_sync(lambda: me.get("/apis").status_code == 401, message="the token ends with its secret")


def test_expiration_and_metadata_are_validated(c: httpx.Client, ns: str, world: dict[str, Any]) -> None:
    short = request_token(c, ns, expirationSeconds=300)
    assert short.status_code == 422
    assert short.json()["message"] == ('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                                       "Invalid value: 300: may not specify a duration less than 10 minutes")
    named = c.post(f"/api/v1/namespaces/{ns}/serviceaccounts/app/token",
                   json={"metadata": {"name": "someone-else"}, "spec": {}})
    assert named.status_code == 422
    assert "metadata.name: Invalid value: \"someone-else\": must match the service account name if specified" \
        in named.json()["message"]


def test_a_kubelet_mints_tokens_only_for_its_own_pods(api: ApiServerHarness, c: httpx.Client, ns: str,
                                                      world: dict[str, Any], as_token: Any) -> None:
    projected = {"name": "kube-api-access-abcde", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}
    pods = {}
    for node in ("node-1", "node-2"):
        body = {"metadata": {"name": f"on-{node}"}, "spec": {
            "serviceAccountName": "app" if node == "node-1" else "other-app", "nodeName": node,
            "volumes": [projected], "containers": [{"name": "c", "image": "busybox"}]}}
        c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "other-app"}})
        resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=body)
        assert resp.status_code == 201, resp.text
        pods[node] = resp.json()
    c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "kube-root-ca.crt"},
                                                        "data": {"ca.crt": "pem"}})
    kubelet = as_token(api.token("node-1"))
    eventually_sync(lambda: request_token(kubelet, ns, boundObjectRef=ref(pods["node-1"])).status_code == 201,
                    message="node-1 gets a token for its pod")
    assert kubelet.get(f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt").status_code == 200
    unbound = request_token(kubelet, ns)
    assert unbound.status_code == 403
    assert unbound.json()["message"] == 'serviceaccounts "app" is forbidden: node requested token not bound to a pod'
    no_uid = request_token(kubelet, ns, boundObjectRef={"apiVersion": "v1", "kind": "Pod", "name": "on-node-1"})
    assert no_uid.json()["message"].endswith("node requested token with a pod binding without a uid")
    # node-2's pod: node-1 has no pod of that account (authorizer), nor may it bind to that pod (admission).
    assert request_token(kubelet, ns, "other-app", boundObjectRef=ref(pods["node-2"])).status_code == 403
    elsewhere = request_token(kubelet, ns, boundObjectRef=ref(world["pod"]))
    assert elsewhere.status_code == 403
    assert elsewhere.json()["message"] == ('serviceaccounts "app" is forbidden: node requested token bound to a pod '
                                           "scheduled on a different node")
