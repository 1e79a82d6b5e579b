"""What writes answer, as upstream: DELETE's Status or object, the bindings collection, JSON
patch failures, and paged lists' remainingItemCount, over real HTTP."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import yaml

NS = "default"
CMS = f"/api/v1/namespaces/{NS}/configmaps"
PODS = f"/api/v1/namespaces/{NS}/pods"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _configmap(http: httpx.Client, name: str, **meta: Any) -> dict[str, Any]:
    resp = http.post(CMS, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta},
                                "data": {"k": "v"}})
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def _pod(http: httpx.Client, name: str) -> dict[str, Any]:
    resp = http.post(PODS, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def test_immediate_delete_answers_success_status(admin_http: httpx.Client) -> None:
    name = _name("cm")
    uid = _configmap(admin_http, name)["metadata"]["uid"]
    resp = admin_http.delete(f"{CMS}/{name}")
    assert resp.status_code == 200
    assert resp.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                           "details": {"name": name, "kind": "configmaps", "uid": uid}}
    assert admin_http.get(f"{CMS}/{name}").status_code == 404


def test_grouped_delete_names_the_group(admin_http: httpx.Client) -> None:
    name = _name("lease")
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}}
    created = admin_http.post(f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases", json=lease)
    assert created.status_code == 201
    resp = admin_http.delete(f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/{name}")
    assert resp.json()["details"] == {"name": name, "group": "coordination.k8s.io", "kind": "leases",
                                      "uid": created.json()["metadata"]["uid"]}


def test_pods_answer_with_the_deleted_object(admin_http: httpx.Client) -> None:
    name = _name("pod")
    _pod(admin_http, name)
    resp = admin_http.delete(f"{PODS}/{name}", params={"gracePeriodSeconds": 0})
    assert resp.status_code == 200
    assert resp.json()["kind"] == "Pod" and resp.json()["metadata"]["name"] == name


def test_finalizer_held_delete_answers_the_marked_object(admin_http: httpx.Client) -> None:
    name = _name("cm")
    _configmap(admin_http, name, finalizers=["example.com/hold"])
    resp = admin_http.delete(f"{CMS}/{name}")
    assert resp.status_code == 200
    assert resp.json()["kind"] == "ConfigMap" and resp.json()["metadata"]["deletionTimestamp"]
    # orphanDependents=false on a pending delete is upstream's one 202.
    again = admin_http.request("DELETE", f"{CMS}/{name}", json={"orphanDependents": False})
    assert again.status_code == 202 and again.json()["kind"] == "ConfigMap"
    admin_http.patch(f"{CMS}/{name}", json={"metadata": {"finalizers": None}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert admin_http.get(f"{CMS}/{name}").status_code == 404


def test_bindings_collection_binds_the_named_pod(admin_http: httpx.Client) -> None:
    name = _name("pod")
    _pod(admin_http, name)
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    resp = admin_http.post(f"/api/v1/namespaces/{NS}/bindings", json=binding)
    assert resp.status_code == 201, resp.text
    assert resp.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    assert admin_http.get(f"{PODS}/{name}").json()["spec"]["nodeName"] == "node-1"
    again = admin_http.post(f"/api/v1/namespaces/{NS}/bindings", json=binding)
    assert again.status_code == 409 and "is already assigned to node" in again.json()["message"]


def test_bindings_refuse_bad_requests_and_are_discovered(admin_http: httpx.Client) -> None:
    name = _name("pod")
    _pod(admin_http, name)
    mismatch = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"}, "target": {"name": "node-1"}}
    resp = admin_http.post(f"{PODS}/{name}/binding", json=mismatch)
    assert resp.status_code == 400 and resp.json()["message"] == "name in URL does not match name in Binding object"
    no_target = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}}
    assert admin_http.post(f"/api/v1/namespaces/{NS}/bindings", json=no_target).status_code == 400
    assert admin_http.get(f"{PODS}/{name}").json()["spec"].get("nodeName") is None
    assert admin_http.get(f"/api/v1/namespaces/{NS}/bindings").status_code == 405
    resources = {r["name"]: r for r in admin_http.get("/api/v1").json()["resources"]}
    assert resources["bindings"]["kind"] == "Binding" and resources["bindings"]["verbs"] == ["create"]


def test_json_patch_errors(admin_http: httpx.Client) -> None:
    name = _name("cm")
    _configmap(admin_http, name)
    headers = {"Content-Type": "application/json-patch+json"}
    failed = admin_http.patch(f"{CMS}/{name}", headers=headers,
                              json=[{"op": "test", "path": "/data/k", "value": "other"},
                                    {"op": "replace", "path": "/data/k", "value": "changed"}])
    assert failed.status_code == 422
    assert failed.content == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the '
                              b'server rejected our request due to an error in our request","reason":"Invalid",'
                              b'"details":{},"code":422}\n')
    missing = admin_http.patch(f"{CMS}/{name}", headers=headers, json=[{"op": "remove", "path": "/data/nope"}])
    assert missing.status_code == 422
    malformed = admin_http.patch(f"{CMS}/{name}", headers=headers, json={"op": "remove"})
    assert malformed.status_code == 400 and malformed.json()["reason"] == "BadRequest"
    assert admin_http.get(f"{CMS}/{name}").json()["data"] == {"k": "v"}
    ok = admin_http.patch(f"{CMS}/{name}", headers=headers,
                          json=[{"op": "test", "path": "/data/k", "value": "v"},
                                {"op": "replace", "path": "/data/k", "value": "changed"}])
    assert ok.status_code == 200 and ok.json()["data"] == {"k": "changed"}


def test_paged_lists_count_what_is_left(admin_http: httpx.Client) -> None:
    ns = _name("paging")
    assert admin_http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": ns}}).status_code == 201
    for i in range(5):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "labels": {"i": str(i)}}}
        assert admin_http.post(f"/api/v1/namespaces/{ns}/configmaps", json=body).status_code == 201
    url = f"/api/v1/namespaces/{ns}/configmaps"
    first = admin_http.get(url, params={"limit": 2}).json()["metadata"]
    assert first["remainingItemCount"] == 3 and first["continue"]
    second = admin_http.get(url, params={"limit": 2, "continue": first["continue"]}).json()["metadata"]
    assert second["remainingItemCount"] == 1
    last = admin_http.get(url, params={"limit": 2, "continue": second["continue"]}).json()
    assert len(last["items"]) == 1 and "continue" not in last["metadata"]
    assert "remainingItemCount" not in last["metadata"]
    filtered = admin_http.get(url, params={"limit": 2, "labelSelector": "i"}).json()["metadata"]
    assert filtered["continue"] and "remainingItemCount" not in filtered


def test_list_resource_version_match(admin_http: httpx.Client) -> None:
    name = _name("cm")
    rv = _configmap(admin_http, name)["metadata"]["resourceVersion"]
    admin_http.patch(f"{CMS}/{name}", json={"data": {"k": "new"}},
                     headers={"Content-Type": "application/merge-patch+json"})
    exact = admin_http.get(CMS, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"}).json()
    assert exact["metadata"]["resourceVersion"] == rv
    assert {i["metadata"]["name"]: i["data"]["k"] for i in exact["items"]}[name] == "v"
    newer = admin_http.get(CMS, params={"resourceVersion": rv, "resourceVersionMatch": "NotOlderThan"}).json()
    assert {i["metadata"]["name"]: i["data"]["k"] for i in newer["items"]}[name] == "new"
    future = admin_http.get(CMS, params={"resourceVersion": str(int(rv) + 10**9),
                                         "resourceVersionMatch": "NotOlderThan"})
    assert future.status_code == 504 and future.json()["reason"] == "Timeout"
    assert future.json()["message"].startswith(f"Timeout: Too large resource version: {int(rv) + 10**9}, current: ")
    bad = admin_http.get(CMS, params={"resourceVersion": "0", "resourceVersionMatch": "Exact"})
    assert bad.status_code == 422
    assert bad.json()["message"] == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
                                     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')


def test_yaml_bodies_are_accepted_wherever_json_is(admin_http: httpx.Client) -> None:
    """`curl -H 'Content-Type: application/yaml' --data-binary @pod.yaml`, as upstream accepts it."""
    name = _name("yaml")
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  color: blue\n"
    created = admin_http.post(CMS, content=body, headers={"Content-Type": "application/yaml"})
    assert created.status_code == 201, created.text
    replaced = created.json()
    replaced["data"] = {"color": "green"}
    put = admin_http.put(f"{CMS}/{name}", content=yaml.safe_dump(replaced),
                         headers={"Content-Type": "application/yaml"})
    assert put.status_code == 200, put.text
    assert admin_http.get(f"{CMS}/{name}").json()["data"] == {"color": "green"}
    broken = admin_http.post(CMS, content="metadata: [unclosed", headers={"Content-Type": "application/yaml"})
    assert broken.status_code == 400 and broken.json()["reason"] == "BadRequest"


def test_a_null_quantity_is_invalid_not_a_server_error(admin_http: httpx.Client) -> None:
    name = _name("nullq")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"": None}}}]}}
    resp = admin_http.post(PODS, json=pod)
    assert resp.status_code == 422, resp.text
    assert admin_http.get(f"{PODS}/{name}").status_code == 404
