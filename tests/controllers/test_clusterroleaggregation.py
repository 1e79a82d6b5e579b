"""ClusterRole aggregation with the real controller-manager and the real kubectl: `view` is
filled from system:aggregate-to-view (so a user bound to it reads pods but cannot create
them), a new role labelled aggregate-to-view extends view, edit and admin, and dropping
the label takes its rules away again."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import httpx
import pytest

from controllers.clusterroleaggregation import aggregate_rules
from controllers.clusterroleaggregation._api import ClusterRole
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync
from kube.testing.process import Process
from tests.controllers._kubectl import kubectl

pytestmark = pytest.mark.timeout(180)
NS = "agg"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
LEASES_RULE = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch"]}


@pytest.fixture(scope="module")
def viewer_token(admin_http: httpx.Client) -> str:
    """A ServiceAccount in NS bound (by a RoleBinding) to the `view` ClusterRole, and its token."""
    admin_http.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
    admin_http.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "viewer"}})
    admin_http.post(f"{RBAC}/namespaces/{NS}/rolebindings", json={
        "metadata": {"name": "viewer-views"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": NS}]})
    resp = admin_http.post(f"/api/v1/namespaces/{NS}/serviceaccounts/viewer/token",
                           json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                 "spec": {"expirationSeconds": 3600}})
    assert resp.status_code == 201, resp.text
    return str(resp.json()["status"]["token"])


def has_lease_rule(admin_http: httpx.Client, name: str) -> bool:
    return LEASES_RULE in rules_of(admin_http, name)


def rules_of(admin_http: httpx.Client, name: str) -> list[dict[str, Any]]:
    resp = admin_http.get(f"{RBAC}/clusterroles/{name}")
    assert resp.status_code == 200, resp.text
    return list(resp.json().get("rules") or [])


def test_bootstrap_declares_the_aggregated_roles(admin_http: httpx.Client) -> None:
    for name, selects, label in (("admin", "admin", None), ("edit", "edit", "admin"), ("view", "view", "edit")):
        role = admin_http.get(f"{RBAC}/clusterroles/{name}").json()
        assert role["aggregationRule"] == {"clusterRoleSelectors": [
            {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{selects}": "true"}}]}
        if label:
            assert role["metadata"]["labels"][f"rbac.authorization.k8s.io/aggregate-to-{label}"] == "true"
    for name in ("system:discovery", "system:basic-user", "system:public-info-viewer"):
        binding = admin_http.get(f"{RBAC}/clusterrolebindings/{name}").json()
        assert {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"} \
            in binding["subjects"]


def test_a_user_bound_to_view_reads_pods_but_cannot_create_them(
        api: ApiServerHarness, manager: Process, admin_http: httpx.Client, viewer_token: str,
        tmp_path: Path) -> None:
    aggregate_view = rules_of(admin_http, "system:aggregate-to-view")
    eventually_sync(lambda: rules_of(admin_http, "view") == aggregate_view, timeout=20,
                    message="view aggregated from system:aggregate-to-view")
    eventually_sync(lambda: len(rules_of(admin_http, "admin")) > len(rules_of(admin_http, "edit"))
                    > len(rules_of(admin_http, "view")), timeout=20, message="admin ⊃ edit ⊃ view")

    got = kubectl(api, "get", "pods", "-n", NS, cache=tmp_path, token=viewer_token)
    assert got.returncode == 0, got.stderr
    assert "No resources found" in got.stderr
    created = kubectl(api, "run", "web", "--image=nginx", "-n", NS, cache=tmp_path, token=viewer_token)
    assert created.returncode != 0
    assert (f'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:{NS}:viewer" '
            f'cannot create resource "pods" in API group "" in the namespace "{NS}"') in created.stderr
    assert kubectl(api, "auth", "can-i", "list", "deployments.apps", "-n", NS, cache=tmp_path,
                   token=viewer_token).stdout.strip() == "yes"
    assert kubectl(api, "auth", "can-i", "delete", "pods", "-n", NS, cache=tmp_path,
                   token=viewer_token).stdout.strip() == "no"


def test_a_role_labelled_aggregate_to_view_extends_view_edit_and_admin(
        api: ApiServerHarness, manager: Process, admin_http: httpx.Client, viewer_token: str,
        tmp_path: Path) -> None:
    denied = kubectl(api, "get", "leases", "-n", NS, cache=tmp_path, token=viewer_token)
    assert denied.returncode != 0 and "Forbidden" in denied.stderr
    label = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    resp = admin_http.post(f"{RBAC}/clusterroles", json={
        "metadata": {"name": "lease-viewer", "labels": label}, "rules": [LEASES_RULE]})
    assert resp.status_code == 201, resp.text

    for name in ("view", "edit", "admin"):
        eventually_sync(functools.partial(has_lease_rule, admin_http, name), timeout=20,
                        message=f"{name} gained the lease rule")
    eventually_sync(lambda: kubectl(api, "get", "leases", "-n", NS, cache=tmp_path,
                                    token=viewer_token).returncode == 0, timeout=10, message="viewer reads leases")

    assert admin_http.patch(f"{RBAC}/clusterroles/lease-viewer", json={"metadata": {"labels": None}},
                            headers={"Content-Type": "application/merge-patch+json"}).status_code == 200
    eventually_sync(lambda: LEASES_RULE not in rules_of(admin_http, "view"), timeout=20,
                    message="view lost the lease rule")


def test_aggregate_rules_follow_selector_then_name_order_without_duplicates() -> None:
    def role(name: str, labels: dict[str, str], *verbs: str) -> ClusterRole:
        return ClusterRole.model_validate({"metadata": {"name": name, "labels": labels},
                                           "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [v]}
                                                     for v in verbs]})

    target = ClusterRole.model_validate({"metadata": {"name": "t", "labels": {"a": "1"}}, "aggregationRule": {
        "clusterRoleSelectors": [{"matchLabels": {"b": "1"}}, {"matchLabels": {"a": "1"}}]}})
    roles = [role("z", {"a": "1"}, "get"), role("y", {"b": "1"}, "list", "get"), role("x", {"a": "1"}, "watch"),
             role("other", {}, "delete"), target]
    assert [r.verbs for r in aggregate_rules(target, roles)] == [["list"], ["get"], ["watch"]]
