"""CustomResourceDefinitions served like built-in kinds: a CRD is stored and validated, its
versions are served, discovered and described once Established, and its objects get the
schema's validation, pruning and defaulting, the status and scale subresources, and go away
with the CRD."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx

from kube.testing.eventually import eventually
from tests.apiserver.inprocess import admin_client, serve_in_process

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 10},
            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
            "name": {"type": "string", "pattern": "^[a-z]+$"},
            "replicas": {"type": "integer"},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
        "status": {"type": "object", "properties": {
            "ready": {"type": "integer"}, "selector": {"type": "string"}}}}}


def widget_crd(**overrides: Any) -> dict[str, Any]:
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
               "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                        "statusReplicasPath": ".status.ready",
                                                        "labelSelectorPath": ".status.selector"}},
               "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                            {"name": "Color", "type": "string", "jsonPath": ".spec.color"}]}
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
                 "versions": [version]}}
    crd["spec"].update(overrides)
    return crd


async def established(c: httpx.AsyncClient, name: str) -> None:
    async def check() -> bool:
        conds = (await c.get(f"{CRDS}/{name}")).json().get("status", {}).get("conditions") or []
        return any(x["type"] == "Established" and x["status"] == "True" for x in conds)
    await eventually(check)


def widget(obj_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": obj_name}, "spec": spec}


async def test_crd_validation_names_every_error(etcd_endpoint: str, tmp_path: Path) -> None:
    async with serve_in_process(etcd_endpoint, tmp_path) as server, admin_client(server) as c:
        bad = widget_crd(scope="Sideways")
        bad["spec"]["versions"] = [{**bad["spec"]["versions"][0], "storage": False}]
        r = await c.post(CRDS, json=bad)
        assert r.status_code == 422, r.text
        fields = {cause["field"] for cause in r.json()["details"]["causes"]}
        assert {"spec.scope", "spec.versions"} <= fields
        assert "must have exactly one version marked as storage version" in r.json()["message"]
        misnamed = widget_crd()
        misnamed["metadata"]["name"] = "gadgets.example.com"
        r = await c.post(CRDS, json=misnamed)
        assert r.status_code == 422 and 'must be spec.names.plural+"."+spec.group' in r.json()["message"]
        assert (await c.get(f"{CRDS}/gadgets.example.com")).status_code == 404


async def test_custom_resources_are_served_validated_and_cleaned_up(etcd_endpoint: str, tmp_path: Path) -> None:
    async with serve_in_process(etcd_endpoint, tmp_path) as server, admin_client(server) as c:
        created = await c.post(CRDS, json=widget_crd())
        assert created.status_code == 201, created.text
        assert created.json()["status"]["storedVersions"] == ["v1"]
        await established(c, "widgets.example.com")
        crd = (await c.get(f"{CRDS}/widgets.example.com")).json()
        assert crd["status"]["acceptedNames"]["kind"] == "Widget"
        assert {x["type"]: x["status"] for x in crd["status"]["conditions"]} == \
            {"NamesAccepted": "True", "Established": "True"}

        # discovery, legacy and aggregated, and OpenAPI
        resources = (await c.get("/apis/example.com/v1")).json()["resources"]
        assert {r["name"] for r in resources} == {"widgets", "widgets/status", "widgets/scale"}
        agg = (await c.get("/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})).json()
        assert any(g["metadata"]["name"] == "example.com" for g in agg["items"])
        doc = (await c.get("/openapi/v2")).json()
        assert doc["definitions"]["com.example.v1.Widget"]["properties"]["spec"]["required"] == ["size"]

        # create: defaults filled in, unknown fields pruned (kept where preserved), status dropped
        body = widget("w1", size=3, bogus=1, extra={"anything": {"goes": True}})
        body["status"] = {"ready": 9}
        r = await c.post(WIDGETS, json=body)
        assert r.status_code == 201, r.text
        w = r.json()
        assert w["spec"] == {"size": 3, "color": "red", "extra": {"anything": {"goes": True}}}
        assert "status" not in w and w["metadata"]["generation"] == 1
        assert 'unknown field \\"spec.bogus\\"' in r.headers.get("warning", "")
        strict = await c.post(f"{WIDGETS}?fieldValidation=Strict", json=widget("w2", size=3, bogus=1))
        assert strict.status_code == 400 and 'unknown field "spec.bogus"' in strict.json()["message"]

        # every schema violation in one 422
        r = await c.post(WIDGETS, json=widget("w3", size=20, color="green", name="Bad1"))
        assert r.status_code == 422, r.text
        status = r.json()
        assert status["message"].startswith('Widget.example.com "w3" is invalid: [')
        messages = {cause["field"]: cause["message"] for cause in status["details"]["causes"]}
        assert messages["spec.size"] == "Invalid value: 20: spec.size in body should be less than or equal to 10"
        assert messages["spec.color"] == 'Unsupported value: "green": supported values: "red", "blue"'
        assert messages["spec.name"] == "Invalid value: \"Bad1\": spec.name in body should match '^[a-z]+$'"
        r = await c.post(WIDGETS, json=widget("w4", size="three"))
        assert r.status_code == 422
        assert 'spec.size in body must be of type integer: "string"' in r.json()["message"]
        assert (await c.post(WIDGETS, json=widget("w5"))).json()["details"]["causes"] == [
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"}]
        assert (await c.get(f"{WIDGETS}/w3")).status_code == 404

        # status subresource: the main resource ignores status; /status changes nothing else
        merge = {"Content-Type": "application/merge-patch+json"}
        r = await c.patch(f"{WIDGETS}/w1/status", headers=merge,
                          content=b'{"status": {"ready": 2, "selector": "app=w"}, "spec": {"size": 9}}')
        assert r.status_code == 200, r.text
        assert r.json()["status"] == {"ready": 2, "selector": "app=w"} and r.json()["spec"]["size"] == 3
        assert r.json()["metadata"]["generation"] == 1
        r = await c.patch(f"{WIDGETS}/w1", headers=merge, content=b'{"spec": {"size": 4}, "status": {"ready": 0}}')
        assert r.json()["status"]["ready"] == 2 and r.json()["metadata"]["generation"] == 2
        smp = await c.patch(f"{WIDGETS}/w1", headers={"Content-Type": "application/strategic-merge-patch+json"},
                            content=b'{"spec": {"size": 5}}')
        assert smp.status_code == 415
        jp = await c.patch(f"{WIDGETS}/w1", headers={"Content-Type": "application/json-patch+json"},
                           content=b'[{"op": "replace", "path": "/spec/size", "value": 6}]')
        assert jp.json()["spec"]["size"] == 6

        # scale subresource
        scale = (await c.get(f"{WIDGETS}/w1/scale")).json()
        assert scale["kind"] == "Scale" and scale["status"] == {"replicas": 2, "selector": "app=w"}
        r = await c.patch(f"{WIDGETS}/w1/scale", headers=merge, content=b'{"spec": {"replicas": 5}}')
        assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
        assert (await c.get(f"{WIDGETS}/w1")).json()["spec"]["replicas"] == 5

        # server-side apply, lists with selectors, Tables with the printer columns
        apply = await c.patch(f"{WIDGETS}/w6?fieldManager=me", headers={
            "Content-Type": "application/apply-patch+yaml"},
            content=b'{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w6", '
                    b'"labels": {"tier": "a"}}, "spec": {"size": 2, "color": "blue"}}')
        assert apply.status_code == 201, apply.text
        assert apply.json()["metadata"]["managedFields"][0]["manager"] == "me"
        listed = (await c.get(f"{WIDGETS}?labelSelector=tier%3Da")).json()
        assert listed["kind"] == "WidgetList" and [i["metadata"]["name"] for i in listed["items"]] == ["w6"]
        page = (await c.get(f"{WIDGETS}?limit=1")).json()
        assert len(page["items"]) == 1 and page["metadata"]["continue"]
        table = (await c.get(WIDGETS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).json()
        assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Size", "Color"]
        assert [row["cells"] for row in table["rows"]] == [["w1", 6, "red"], ["w6", 2, "blue"]]

        # deleting the CRD deletes its objects, then stops serving them
        r = await c.delete(f"{CRDS}/widgets.example.com")
        assert r.status_code == 200

        async def gone() -> bool:
            return (await c.get(f"{CRDS}/widgets.example.com")).status_code == 404
        await eventually(gone)
        assert (await c.get("/apis/example.com/v1")).status_code == 404
        assert (await c.get(WIDGETS)).status_code == 404
        keys = await server.storage.list(f"{server.config.etcd_prefix}/example.com/widgets/")
        assert keys.items == []


async def test_second_served_version_and_name_conflicts(etcd_endpoint: str, tmp_path: Path) -> None:
    async with serve_in_process(etcd_endpoint, tmp_path) as server, admin_client(server) as c:
        crd = widget_crd()
        v1 = crd["spec"]["versions"][0]
        v2 = copy.deepcopy(v1)
        v2.update(name="v2", storage=False)
        crd["spec"]["versions"] = [v1, v2]
        assert (await c.post(CRDS, json=crd)).status_code == 201
        await established(c, "widgets.example.com")
        r = await c.post(WIDGETS, json=widget("w", size=1))
        assert r.status_code == 201
        v2_obj = (await c.get("/apis/example.com/v2/namespaces/default/widgets/w")).json()
        assert v2_obj["apiVersion"] == "example.com/v2" and v2_obj["spec"]["size"] == 1
        group = (await c.get("/apis/example.com")).json()
        assert group["preferredVersion"]["version"] == "v2"

        clash = widget_crd(names={"plural": "gizmos", "singular": "gizmo", "kind": "Widget"})
        clash["metadata"]["name"] = "gizmos.example.com"
        assert (await c.post(CRDS, json=clash)).status_code == 201

        async def refused() -> bool:
            conds = (await c.get(f"{CRDS}/gizmos.example.com")).json()["status"]["conditions"]
            return any(x["type"] == "NamesAccepted" and x["status"] == "False" and x["reason"] == "KindConflict"
                       for x in conds)
        await eventually(refused)
        assert (await c.get("/apis/example.com/v1/namespaces/default/gizmos")).status_code == 404


async def test_custom_resource_metadata_of_the_wrong_type_is_a_400(etcd_endpoint: str, tmp_path: Path) -> None:
    """A custom object's metadata decodes as an ObjectMeta, as a built-in's does: a name, a label or
    a finalizer of the wrong JSON type is refused in decoding's words, on create, update and patch,
    and nothing is stored."""
    async with serve_in_process(etcd_endpoint, tmp_path) as server, admin_client(server) as c:
        assert (await c.post(CRDS, json=widget_crd())).status_code == 201
        await established(c, "widgets.example.com")
        for meta in ({"name": [1, "a"]}, {"name": -1}, {"name": "w", "labels": {"k": 1}},
                     {"name": "w", "finalizers": "x"}):
            r = await c.post(WIDGETS, json={**widget("w", size=1), "metadata": meta})
            assert r.status_code == 400, r.text
            assert r.json()["message"].startswith('Widget in version "v1" cannot be handled as a Widget: json: '
                                                  "cannot unmarshal"), r.text
        assert (await c.get(f"{WIDGETS}/w")).status_code == 404
        stored = (await c.post(WIDGETS, json=widget("w", size=1))).json()
        r = await c.put(f"{WIDGETS}/w", json={**stored, "metadata": {**stored["metadata"], "labels": {"k": True}}})
        assert r.status_code == 400, r.text
        r = await c.patch(f"{WIDGETS}/w", json={"metadata": {"annotations": {"a": 2}}},
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 400, r.text
        after = (await c.get(f"{WIDGETS}/w")).json()
        assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
