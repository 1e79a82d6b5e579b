"""Custom resources with the real controller-manager: a ConfigMap owned by a custom resource
is garbage collected once its owner is deleted, and deleting a namespace deletes the
custom resources in it."""

from __future__ import annotations

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
