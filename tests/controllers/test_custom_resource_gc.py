"""Custom resources with the real controller-manager: a ConfigMap owned by a custom resource
is garbage collected once its owner is deleted, custom resources owned by a ConfigMap or by
another custom resource (even of a kind defined after the controller-manager started) go
with their owners, foreground and orphan propagation work for custom kinds, and deleting a
namespace deletes the custom resources in it."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from kube.testing.eventually import eventually_sync
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "sprockets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def sprockets(admin_http: httpx.Client) -> str:
    assert admin_http.post(CRDS, json=CRD).status_code == 201

    def served() -> bool:
        return admin_http.get("/apis/example.com/v1/namespaces/default/sprockets").status_code == 200
    eventually_sync(served, timeout=10, message="sprockets served")
    return "/apis/example.com/v1/namespaces/{ns}/sprockets"


def test_a_dependent_of_a_custom_resource_is_collected(manager: Process, admin_http: httpx.Client,
                                                       sprockets: str) -> None:
    owner = admin_http.post(sprockets.format(ns="default"), json={
        "apiVersion": "example.com/v1", "kind": "Sprocket", "metadata": {"name": "s1"}, "spec": {"teeth": 9}})
    assert owner.status_code == 201, owner.text
    ref = {"apiVersion": "example.com/v1", "kind": "Sprocket", "name": "s1", "uid": owner.json()["metadata"]["uid"]}
    child = admin_http.post("/api/v1/namespaces/default/configmaps", json={
        "metadata": {"name": "s1-child", "ownerReferences": [ref]}, "data": {"a": "b"}})
    assert child.status_code == 201
    assert admin_http.delete(f"{sprockets.format(ns='default')}/s1").status_code == 200
    eventually_sync(lambda: admin_http.get("/api/v1/namespaces/default/configmaps/s1-child").status_code == 404,
                    timeout=30, message="the dependent ConfigMap collected")


def test_deleting_a_namespace_deletes_its_custom_resources(manager: Process, admin_http: httpx.Client,
                                                           sprockets: str) -> None:
    assert admin_http.post("/api/v1/namespaces", json={"metadata": {"name": "cr-ns"}}).status_code == 201
    created = admin_http.post(sprockets.format(ns="cr-ns"), json={
        "apiVersion": "example.com/v1", "kind": "Sprocket", "metadata": {"name": "s2"}})
    assert created.status_code == 201
    assert admin_http.delete("/api/v1/namespaces/cr-ns").status_code == 200
    eventually_sync(lambda: admin_http.get("/api/v1/namespaces/cr-ns").status_code == 404, timeout=30,
                    message="the namespace gone with its custom resources")
    assert admin_http.get(sprockets.format(ns="cr-ns")).json()["items"] == []


def gear_crd() -> dict[str, Any]:
    crd: dict[str, Any] = copy.deepcopy(CRD)
    crd["metadata"]["name"] = "gears.example.com"
    crd["spec"]["names"] = {"plural": "gears", "singular": "gear", "kind": "Gear"}
    return crd


def make(admin_http: httpx.Client, path: str, kind: str, name: str, *owners: dict[str, Any],
         block: bool = False) -> dict[str, Any]:
    refs = [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"], **({"blockOwnerDeletion": True} if block else {})} for o in owners]
    api_version = "v1" if kind == "ConfigMap" else "example.com/v1"
    r = admin_http.post(path, json={"apiVersion": api_version, "kind": kind,
                                    "metadata": {"name": name, "ownerReferences": refs or None}})
    assert r.status_code == 201, r.text
    return dict(r.json())


def gone(admin_http: httpx.Client, path: str) -> bool:
    return admin_http.get(path).status_code == 404


def test_custom_dependents_of_any_owner_are_collected(manager: Process, admin_http: httpx.Client,
                                                      sprockets: str) -> None:
    """A custom resource owned by a ConfigMap, and one owned by a custom resource of a kind
    whose CRD appears after the controller-manager started, go with their owners."""
    base, cms = sprockets.format(ns="default"), "/api/v1/namespaces/default/configmaps"
    cm = make(admin_http, cms, "ConfigMap", "owner-cm")
    by_cm = make(admin_http, base, "Sprocket", "by-cm", cm)
    assert admin_http.delete(f"{cms}/owner-cm").status_code == 200
    eventually_sync(lambda: gone(admin_http, f"{base}/by-cm"), timeout=30, message="sprocket owned by a ConfigMap")
    assert by_cm["metadata"]["ownerReferences"][0]["kind"] == "ConfigMap"

    assert admin_http.post(CRDS, json=gear_crd()).status_code == 201
    gears = "/apis/example.com/v1/namespaces/default/gears"
    eventually_sync(lambda: admin_http.get(gears).status_code == 200, timeout=10, message="gears served")
    gear = make(admin_http, gears, "Gear", "g1")
    make(admin_http, base, "Sprocket", "by-gear", gear)
    make(admin_http, gears, "Gear", "g1-sub", gear)
    assert admin_http.delete(f"{gears}/g1").status_code == 200
    eventually_sync(lambda: gone(admin_http, f"{base}/by-gear") and gone(admin_http, f"{gears}/g1-sub"),
                    timeout=30, message="dependents of a Gear (a kind newer than the controller-manager)")
    assert admin_http.delete(f"{CRDS}/gears.example.com").status_code == 200


def test_foreground_and_orphan_propagation_for_custom_kinds(manager: Process, admin_http: httpx.Client,
                                                            sprockets: str) -> None:
    base = sprockets.format(ns="default")
    parent = make(admin_http, base, "Sprocket", "fg-parent")
    make(admin_http, base, "Sprocket", "fg-child", parent, block=True)
    r = admin_http.request("DELETE", f"{base}/fg-parent", json={"propagationPolicy": "Foreground"})
    assert r.status_code in (200, 202), r.text
    # The owner waits, with the foregroundDeletion finalizer, until its blocking dependent is gone.
    assert "foregroundDeletion" in (admin_http.get(f"{base}/fg-parent").json()["metadata"].get("finalizers") or [])
    eventually_sync(lambda: gone(admin_http, f"{base}/fg-child") and gone(admin_http, f"{base}/fg-parent"),
                    timeout=30, message="foreground deletion of a custom owner and its dependent")

    parent = make(admin_http, base, "Sprocket", "or-parent")
    make(admin_http, base, "Sprocket", "or-child", parent)
    r = admin_http.request("DELETE", f"{base}/or-parent", json={"propagationPolicy": "Orphan"})
    assert r.status_code in (200, 202), r.text
    eventually_sync(lambda: gone(admin_http, f"{base}/or-parent"), timeout=30, message="orphaning owner gone")
    child = admin_http.get(f"{base}/or-child")
    assert child.status_code == 200 and not child.json()["metadata"].get("ownerReferences"), child.text
