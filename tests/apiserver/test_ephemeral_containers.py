"""pods/ephemeralcontainers: adding debugging containers to a pod, and everything that may not be done."""

from __future__ import annotations

import ssl
import uuid
from typing import Any

import httpx
import pytest

from kube.testing.apiserver import ApiServerHarness
from tests.apiserver.conftest import causes

SMP = {"Content-Type": "application/strategic-merge-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}


def new_pod(c: httpx.Client, ns: str, **spec: Any) -> str:
    name = f"p-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}], **spec}}
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    assert resp.status_code == 201, resp.text
    return name


def url(ns: str, name: str) -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}/ephemeralcontainers"


def add(c: httpx.Client, ns: str, name: str, *containers: dict[str, Any]) -> httpx.Response:
    return c.patch(url(ns, name), json={"spec": {"ephemeralContainers": list(containers)}}, headers=SMP)


def debugger(name: str = "debugger", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "stdin": True, "tty": True, **fields}


def test_strategic_merge_patch_adds_a_defaulted_container_and_nothing_else(c: httpx.Client, ns: str) -> None:
    name = new_pod(c, ns)
    resp = c.patch(url(ns, name), headers=SMP, json={
        "metadata": {"labels": {"app": "changed"}},
        "spec": {"ephemeralContainers": [debugger(targetContainerName="app")],
                 "containers": [{"name": "app", "image": "busybox:other"}]}})
    assert resp.status_code == 200, resp.text
    pod = resp.json()
    assert pod["kind"] == "Pod"
    [ec] = pod["spec"]["ephemeralContainers"]
    assert ec["targetContainerName"] == "app" and ec["stdin"] is True and ec["tty"] is True
    assert ec["terminationMessagePath"] == "/dev/termination-log"
    assert ec["terminationMessagePolicy"] == "File" and ec["imagePullPolicy"] == "IfNotPresent"
    assert pod["metadata"]["labels"] == {"app": "x"}
    assert pod["spec"]["containers"][0]["image"] == "busybox:1.36"
    # A second patch adds beside the first (merged by name), as `kubectl debug` twice does.
    resp = add(c, ns, name, debugger("second"))
    assert resp.status_code == 200, resp.text
    assert [e["name"] for e in resp.json()["spec"]["ephemeralContainers"]] == ["debugger", "second"]
    stored = c.get(url(ns, name))
    assert stored.status_code == 200 and stored.json() == c.get(f"/api/v1/namespaces/{ns}/pods/{name}").json()


def test_put_and_merge_patch_add_containers(c: httpx.Client, ns: str) -> None:
    name = new_pod(c, ns)
    pod = c.get(url(ns, name)).json()
    pod["spec"]["ephemeralContainers"] = [debugger()]
    resp = c.put(url(ns, name), json=pod)
    assert resp.status_code == 200, resp.text
    assert resp.json()["spec"]["ephemeralContainers"][0]["name"] == "debugger"
    current = resp.json()["spec"]["ephemeralContainers"]
    resp = c.patch(url(ns, name), headers=MERGE, json={"spec": {"ephemeralContainers": [*current, debugger("m")]}})
    assert resp.status_code == 200, resp.text
    assert [e["name"] for e in resp.json()["spec"]["ephemeralContainers"]] == ["debugger", "m"]


def test_existing_containers_may_not_be_changed_or_removed(c: httpx.Client, ns: str) -> None:
    name = new_pod(c, ns)
    assert add(c, ns, name, debugger()).status_code == 200
    changed = add(c, ns, name, debugger(image="alpine"))
    assert causes(changed)["spec.ephemeralContainers"].startswith(
        'Forbidden: existing ephemeral containers "debugger" may not be changed')
    pod = c.get(url(ns, name)).json()
    pod["spec"]["ephemeralContainers"] = []
    removed = c.put(url(ns, name), json=pod)
    assert causes(removed)["spec.ephemeralContainers"].startswith(
        'Forbidden: existing ephemeral containers "debugger" may not be removed')


def test_field_errors_carry_upstreams_paths_and_words(c: httpx.Client, ns: str) -> None:
    name = new_pod(c, ns, initContainers=[{"name": "setup", "image": "busybox:1.36"}])
    got = causes(add(c, ns, name, debugger("app"), debugger("setup"), {"name": "noimage"},
                     debugger("bad", targetContainerName="nope", ports=[{"containerPort": 80}],
                              resources={"limits": {"cpu": "1"}}, livenessProbe={"exec": {"command": ["true"]}},
                              readinessProbe={"exec": {"command": ["true"]}},
                              startupProbe={"exec": {"command": ["true"]}},
                              lifecycle={"preStop": {"exec": {"command": ["true"]}}}, restartPolicy="Always",
                              volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "x"}]),
                     debugger("app2", targetContainerName="setup")))
    path = "spec.ephemeralContainers"
    assert got[f"{path}[0].name"] == 'Duplicate value: "app"'
    assert got[f"{path}[1].name"] == 'Duplicate value: "setup"'
    assert got[f"{path}[2].image"] == "Required value"
    assert got[f"{path}[3].targetContainerName"] == 'Not found: "nope"'
    for field in ("ports", "resources", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
                  "restartPolicy", "volumeMounts[0].subPath"):
        assert got[f"{path}[3].{field}"] == "Forbidden: cannot be set for an Ephemeral Container", field
    assert not any(k.startswith(f"{path}[4]") for k in got), got
    assert "ephemeralContainers" not in c.get(f"/api/v1/namespaces/{ns}/pods/{name}").json()["spec"]


def test_pod_writes_cannot_touch_ephemeral_containers(c: httpx.Client, ns: str) -> None:
    name = new_pod(c, ns)
    resp = c.patch(f"/api/v1/namespaces/{ns}/pods/{name}", headers=SMP,
                   json={"spec": {"ephemeralContainers": [debugger()]}})
    assert causes(resp)["spec"].startswith("Forbidden: pod updates may not change fields other than")
    assert add(c, ns, name, debugger()).status_code == 200
    pod = c.get(f"/api/v1/namespaces/{ns}/pods/{name}").json()
    pod["spec"]["ephemeralContainers"] = []
    assert causes(c.put(f"/api/v1/namespaces/{ns}/pods/{name}", json=pod))["spec"].startswith("Forbidden: ")
    created = c.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "born-with-one"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}], "ephemeralContainers": [debugger()]}})
    assert causes(created)["spec.ephemeralContainers"] == "Forbidden: cannot be set on create"


def test_discovery_lists_the_subresource(c: httpx.Client) -> None:
    resources = {r["name"]: r for r in c.get("/api/v1").json()["resources"]}
    sub = resources["pods/ephemeralcontainers"]
    assert sub["kind"] == "Pod" and sub["namespaced"] is True
    assert sub["verbs"] == ["get", "patch", "update"]


@pytest.fixture(scope="module")
def editor(api: ApiServerHarness, c: httpx.Client, ns: str) -> httpx.Client:
    """A service account of `ns` bound to the bootstrap `edit` ClusterRole there."""
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}"
    assert c.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "dev"}}).status_code == 201
    assert c.post(f"{rbac}/rolebindings", json={
        "metadata": {"name": "dev-edits"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"kind": "ServiceAccount", "name": "dev", "namespace": ns}]}).status_code == 201
    token = c.post(f"/api/v1/namespaces/{ns}/serviceaccounts/dev/token", json={"spec": {}}).json()["status"]["token"]
    return httpx.Client(base_url=api.server, verify=ssl.create_default_context(cafile=str(api.pki.ca_cert)),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_rbac_grants_the_subresource_apart_from_pods(c: httpx.Client, ns: str, editor: httpx.Client) -> None:
    name = new_pod(c, ns)
    denied = add(editor, ns, name, debugger())
    assert denied.status_code == 403, denied.text
    assert 'cannot patch resource "pods/ephemeralcontainers"' in denied.json()["message"]
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}"
    assert c.post(f"{rbac}/roles", json={
        "metadata": {"name": "debugger"},
        "rules": [{"apiGroups": [""], "resources": ["pods/ephemeralcontainers"], "verbs": ["patch"]}]}
    ).status_code == 201
    assert c.post(f"{rbac}/rolebindings", json={
        "metadata": {"name": "dev-debugs"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "debugger"},
        "subjects": [{"kind": "ServiceAccount", "name": "dev", "namespace": ns}]}).status_code == 201
    allowed = add(editor, ns, name, debugger())
    assert allowed.status_code == 200, allowed.text
