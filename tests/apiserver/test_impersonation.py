"""Impersonation, `kubectl auth can-i --list` and `kubectl auth whoami`, with the real kubectl and raw HTTP.

Two ServiceAccounts in namespace `imp`: `bob` may impersonate no one; `alice` is bound to a
ClusterRole that lets her impersonate the user `jane`, the group `developers`, any uid and
the extra `scopes`. `jane` may read pods in `imp` (a RoleBinding). kubectl 1.32+ sends
protobuf bodies for `auth can-i`/`whoami`, which the server does not decode yet, so those
commands run with kubectl 1.30 and 1.31.
"""

from __future__ import annotations

import re
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from kube.testing.kubectl import sdk_bin

NS = "imp"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
SDK_BIN = sdk_bin()
JSON_KUBECTLS = [v for v in ("kubectl.1.30", "kubectl.1.31") if (SDK_BIN / v).exists()]
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def rules_review(namespace: str | None) -> dict[str, Any]:
    spec = {"namespace": namespace} if namespace else {}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": spec}


def _client(api: ApiServerHarness, token: str) -> httpx.Client:
    return httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)


def _created(resp: httpx.Response) -> None:
    assert resp.status_code in (201, 409), resp.text


@pytest.fixture(scope="module")
def tokens(api: ApiServerHarness, admin_http: httpx.Client) -> dict[str, str]:
    """ServiceAccount tokens of bob (no impersonation) and alice (may impersonate jane)."""
    _created(admin_http.post("/api/v1/namespaces", json={"metadata": {"name": NS}}))
    _created(admin_http.post(f"{RBAC}/clusterroles", json={"metadata": {"name": "impersonate-jane"}, "rules": [
        {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["jane"]},
        {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"], "resourceNames": ["developers"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["uids", "userextras/scopes"],
         "verbs": ["impersonate"]}]}))
    _created(admin_http.post(f"{RBAC}/clusterrolebindings", json={
        "metadata": {"name": "alice-impersonates-jane"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonate-jane"},
        "subjects": [{"kind": "ServiceAccount", "name": "alice", "namespace": NS}]}))
    _created(admin_http.post(f"{RBAC}/namespaces/{NS}/roles", json={
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}))
    _created(admin_http.post(f"{RBAC}/namespaces/{NS}/rolebindings", json={
        "metadata": {"name": "jane-reads-pods"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]}))
    out: dict[str, str] = {}
    for name in ("bob", "alice"):
        _created(admin_http.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": name}}))
        resp = admin_http.post(f"/api/v1/namespaces/{NS}/serviceaccounts/{name}/token",
                               json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                     "spec": {"expirationSeconds": 3600}})
        assert resp.status_code == 201, resp.text
        out[name] = resp.json()["status"]["token"]
    return out


@pytest.fixture(scope="module")
def alice(api: ApiServerHarness, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with _client(api, tokens["alice"]) as c:
        yield c


@pytest.fixture(scope="module")
def bob(api: ApiServerHarness, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with _client(api, tokens["bob"]) as c:
        yield c


def kubectl(api: ApiServerHarness, binary: str, *args: str, token: str | None,
            cache: Path) -> subprocess.CompletedProcess[str]:
    extra = ["--token", token] if token else []
    return subprocess.run([str(SDK_BIN / binary), "--kubeconfig", str(api.kubeconfig()), "--cache-dir", str(cache),
                           *extra, *args], capture_output=True, text=True, timeout=60)


BOB = "system:serviceaccount:imp:bob"
ALICE = "system:serviceaccount:imp:alice"


# --- impersonation through kubectl ------------------------------------------------------------

@pytest.mark.parametrize("binary", JSON_KUBECTLS)
def test_kubectl_as_is_refused_without_the_impersonate_verb(api: ApiServerHarness, tokens: dict[str, str],
                                                           binary: str, tmp_path: Path) -> None:
    out = kubectl(api, binary, "auth", "can-i", "list", "pods", "-n", NS, "--as", "jane", token=tokens["bob"],
                  cache=tmp_path)
    assert out.returncode == 1
    assert (f'users "jane" is forbidden: User "{BOB}" cannot impersonate resource "users" in API group "" at the '
            'cluster scope') in out.stderr, out.stderr


@pytest.mark.parametrize("binary", JSON_KUBECTLS)
def test_kubectl_as_runs_as_the_impersonated_user(api: ApiServerHarness, tokens: dict[str, str], binary: str,
                                                  tmp_path: Path) -> None:
    def can_i(*args: str) -> subprocess.CompletedProcess[str]:
        return kubectl(api, binary, "auth", "can-i", *args, token=tokens["alice"], cache=tmp_path)

    allowed = can_i("list", "pods", "-n", NS, "--as", "jane")
    assert allowed.returncode == 0 and allowed.stdout.strip() == "yes", allowed.stdout + allowed.stderr
    denied = can_i("delete", "pods", "-n", NS, "--as", "jane")
    assert denied.returncode == 1 and denied.stdout.strip() == "no", denied.stdout + denied.stderr
    # As alice herself the answer differs: the request really ran as jane.
    assert can_i("list", "pods", "-n", NS).stdout.strip() == "no"
    # resourceNames limit whom she may impersonate.
    other = can_i("list", "pods", "-n", NS, "--as", "mallory")
    assert other.returncode == 1
    assert (f'users "mallory" is forbidden: User "{ALICE}" cannot impersonate resource "users" in API group "" '
            'at the cluster scope') in other.stderr, other.stderr
    group = can_i("list", "pods", "-n", NS, "--as", "jane", "--as-group", "admins")
    assert (f'groups "admins" is forbidden: User "{ALICE}" cannot impersonate resource "groups" in API group "" '
            'at the cluster scope') in group.stderr, group.stderr


# --- impersonation over raw HTTP --------------------------------------------------------------

def test_groups_uid_and_extra_are_impersonated_when_each_is_allowed(alice: httpx.Client) -> None:
    headers = [("Impersonate-User", "jane"), ("Impersonate-Group", "developers"), ("Impersonate-Uid", "u-1234"),
               ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit")]
    resp = alice.post(SSR, json=REVIEW, headers=headers)
    assert resp.status_code == 201, resp.text
    assert resp.json()["status"]["userInfo"] == {"username": "jane", "uid": "u-1234",
                                                 "groups": ["developers", "system:authenticated"],
                                                 "extra": {"scopes": ["view", "edit"]}}


def test_an_extra_the_requester_may_not_set_is_forbidden(alice: httpx.Client) -> None:
    resp = alice.post(SSR, json=REVIEW, headers={"Impersonate-User": "jane", "Impersonate-Extra-Team": "blue"})
    assert resp.status_code == 403
    status = resp.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == (f'userextras.authentication.k8s.io "blue" is forbidden: User "{ALICE}" cannot '
                                 'impersonate resource "userextras/team" in API group "authentication.k8s.io" at the '
                                 'cluster scope')
    assert status["details"] == {"name": "blue", "group": "authentication.k8s.io", "kind": "userextras"}


def test_groups_without_a_user_are_a_bad_request(alice: httpx.Client) -> None:
    resp = alice.post(SSR, json=REVIEW, headers={"Impersonate-Group": "developers"})
    assert resp.status_code == 400
    assert resp.json()["message"] == "requested [{Group  developers    }] without impersonating a user"
    resp = alice.post(SSR, json=REVIEW, headers={"Impersonate-Uid": "u-1"})
    assert resp.status_code == 400 and "without impersonating a user" in resp.json()["message"]


def test_impersonating_a_service_account(admin_http: httpx.Client, bob: httpx.Client) -> None:
    resp = admin_http.post(SSR, json=REVIEW, headers={"Impersonate-User": BOB})
    assert resp.status_code == 201, resp.text
    assert resp.json()["status"]["userInfo"] == {
        "username": BOB, "groups": ["system:serviceaccounts", "system:serviceaccounts:imp", "system:authenticated"]}
    refused = bob.post(SSR, json=REVIEW, headers={"Impersonate-User": "system:serviceaccount:imp:alice"})
    assert refused.status_code == 403
    assert refused.json()["message"] == (f'serviceaccounts "alice" is forbidden: User "{BOB}" cannot impersonate '
                                         'resource "serviceaccounts" in API group "" in the namespace "imp"')


def test_the_impersonated_user_is_authorized_for_the_request(admin_http: httpx.Client) -> None:
    as_jane = {"Impersonate-User": "jane"}
    assert admin_http.get(f"/api/v1/namespaces/{NS}/pods", headers=as_jane).status_code == 200
    denied = admin_http.get("/api/v1/namespaces/default/pods", headers=as_jane)
    assert denied.status_code == 403
    assert denied.json()["message"] == ('pods is forbidden: User "jane" cannot list resource "pods" in API group "" '
                                        'in the namespace "default"')
    # Impersonating system:masters is possible only for whom may impersonate that group (the admin may).
    masters = {"Impersonate-User": "jane", "Impersonate-Group": "system:masters"}
    assert admin_http.get("/api/v1/namespaces/default/pods", headers=masters).status_code == 200


# --- SelfSubjectReview: kubectl auth whoami ---------------------------------------------------

@pytest.mark.parametrize("binary", JSON_KUBECTLS)
def test_kubectl_auth_whoami(api: ApiServerHarness, tokens: dict[str, str], binary: str, tmp_path: Path) -> None:
    me = kubectl(api, binary, "auth", "whoami", token=tokens["bob"], cache=tmp_path)
    assert me.returncode == 0, me.stderr
    # A service account token's credential id (Extra: ...) widens the first column.
    assert re.search(rf"^Username\s+{BOB}$", me.stdout, re.M), me.stdout
    assert re.search(r"^Groups\s+\[system:serviceaccounts system:serviceaccounts:imp system:authenticated\]$",
                     me.stdout, re.M), me.stdout
    assert re.search(r"^Extra: authentication.kubernetes.io/credential-id\s+\[JTI=[-0-9a-f]{36}\]$", me.stdout, re.M)
    jane = kubectl(api, binary, "auth", "whoami", "--as", "jane", "--as-group", "developers", "-o", "json",
                   token=tokens["alice"], cache=tmp_path)
    assert jane.returncode == 0, jane.stderr
    assert '"username": "jane"' in jane.stdout and '"developers"' in jane.stdout, jane.stdout


def test_self_subject_review_over_http(admin_http: httpx.Client, api: ApiServerHarness) -> None:
    resp = admin_http.post(SSR, json=REVIEW)
    assert resp.status_code == 201, resp.text
    review = resp.json()
    assert review["kind"] == "SelfSubjectReview" and review["apiVersion"] == "authentication.k8s.io/v1"
    assert review["metadata"]["creationTimestamp"]
    assert review["status"]["userInfo"]["username"] == "admin"
    assert review["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]
    assert admin_http.get(SSR).status_code == 405


# --- SelfSubjectRulesReview: kubectl auth can-i --list ----------------------------------------

@pytest.mark.parametrize("binary", JSON_KUBECTLS)
def test_kubectl_auth_can_i_list(api: ApiServerHarness, tokens: dict[str, str], binary: str,
                                 tmp_path: Path) -> None:
    listed = kubectl(api, binary, "auth", "can-i", "--list", "-n", NS, "--as", "jane", token=tokens["alice"],
                     cache=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert ["pods", "[]", "[]", "[get", "list", "watch]"] in rows, listed.stdout
    assert ["selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/healthz]", "[]", "[get]"] in rows
    elsewhere = kubectl(api, binary, "auth", "can-i", "--list", "-n", "default", "--as", "jane",
                        token=tokens["alice"], cache=tmp_path)
    assert elsewhere.returncode == 0 and "pods " not in elsewhere.stdout, elsewhere.stdout
    admin = kubectl(api, binary, "auth", "can-i", "--list", token=None, cache=tmp_path)
    assert ["*.*", "[]", "[]", "[*]"] in [line.split() for line in admin.stdout.splitlines()], admin.stdout


def test_self_subject_rules_review_over_http(admin_http: httpx.Client, alice: httpx.Client) -> None:
    resp = alice.post(SSRR, json=rules_review(NS), headers={"Impersonate-User": "jane"})
    assert resp.status_code == 201, resp.text
    status = resp.json()["status"]
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]} in status["resourceRules"]
    assert status["incomplete"] is False and "evaluationError" not in status
    assert any("/version" in r["nonResourceURLs"] for r in status["nonResourceRules"])
    own = alice.post(SSRR, json=rules_review(NS)).json()["status"]["resourceRules"]
    assert {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"]} in own
    missing = alice.post(SSRR, json=rules_review(None))
    assert missing.status_code == 400 and missing.json()["message"] == "no namespace on request"
    # A node's permissions are not enumerable: the Node authorizer makes the answer incomplete.
    node = admin_http.post(SSRR, json=rules_review("default"),
                           headers=[("Impersonate-User", "system:node:node-1"), ("Impersonate-Group", "system:nodes")])
    assert node.status_code == 201, node.text
    assert node.json()["status"]["incomplete"] is True
    assert node.json()["status"]["evaluationError"] == "node authorizer does not support user rule resolution"


def test_bad_rules_review_bodies_are_bad_requests(admin_http: httpx.Client) -> None:
    for body in ({**rules_review(None), "spec": "default"}, {**rules_review(None), "spec": {"namespace": 3}}):
        resp = admin_http.post(SSRR, json=body)
        assert resp.status_code == 400, resp.text


# --- discovery ---------------------------------------------------------------------------------

@pytest.mark.parametrize("binary", [v for v in ("kubectl.1.30", "kubectl.1.33") if (SDK_BIN / v).exists()])
def test_api_resources_lists_the_reviews(api: ApiServerHarness, binary: str, tmp_path: Path) -> None:
    out = kubectl(api, binary, "api-resources", "--api-group", "authentication.k8s.io", token=None, cache=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "selfsubjectreviews" in out.stdout
    out = kubectl(api, binary, "api-resources", "--api-group", "authorization.k8s.io", token=None, cache=tmp_path)
    assert "selfsubjectrulesreviews" in out.stdout and "selfsubjectaccessreviews" in out.stdout


def test_a_binding_to_a_missing_role_is_an_evaluation_error(admin_http: httpx.Client) -> None:
    _created(admin_http.post(f"{RBAC}/clusterrolebindings", json={
        "metadata": {"name": "kim-has-nothing"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "no-such-role"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "kim"}]}))

    def status() -> dict[str, Any] | None:
        got: dict[str, Any] = admin_http.post(SSRR, json=rules_review(NS),
                                              headers={"Impersonate-User": "kim"}).json()["status"]
        return got if "evaluationError" in got else None

    got = eventually_sync(status, timeout=10, message="the binding in the authorizer's cache")
    assert got["evaluationError"] == 'clusterrole.rbac.authorization.k8s.io "no-such-role" not found'
    assert got["incomplete"] is False
