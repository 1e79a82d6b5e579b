"""Hostile input: every malformed or oversized request is answered 4xx in kube-apiserver's words, nothing
it carried is stored, and no single body can exhaust the server (a YAML alias bomb is refused by a server
running under a memory cap, which stays up)."""

from __future__ import annotations

import json
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes.client import ApiClient

from apiserver.endpoints.bounded import MAX_DEPTH
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually_sync

pytestmark = pytest.mark.timeout(180)

JSON = {"content-type": "application/json"}
DEEP = 100_000  # far past any limit: Python's own recursion limit included


def nested(levels: int, leaf: Any = 1) -> Any:
    """`levels` objects inside each other around `leaf`."""
    for _ in range(levels):
        leaf = {"a": leaf}
    return leaf


def deep_json(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def status(resp: httpx.Response, code: int, reason: str) -> str:
    """The Status body's message after checking its code and reason."""
    body = resp.json()
    assert resp.status_code == code and body["kind"] == "Status" and body["reason"] == reason, resp.text
    assert body["code"] == code
    return str(body["message"])


@pytest.fixture(scope="module")
def cm(c: httpx.Client, ns: str) -> str:
    """The URL of a ConfigMap every patch test leaves as it was."""
    resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "base"}, "data": {"a": "b"}})
    assert resp.status_code == 201, resp.text
    return f"/api/v1/namespaces/{ns}/configmaps/base"


def absent(c: httpx.Client, url: str) -> None:
    assert c.get(url).status_code == 404


# --- nesting depth -------------------------------------------------------------------------
def test_deeply_nested_json_body_is_400_and_not_stored(c: httpx.Client, ns: str) -> None:
    body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":' + deep_json(DEEP) + "}"
    resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", content=body, headers=JSON)
    message = status(resp, 400, "BadRequest")
    assert message.startswith("the object provided is unrecognized (must be of type ConfigMap): couldn't get "
                              "version/kind; json parse error: invalid character '{' exceeded max depth"), message
    absent(c, f"/api/v1/namespaces/{ns}/configmaps/deep")


@pytest.mark.parametrize("media, body", [
    ("application/merge-patch+json", '{"data":' + deep_json(DEEP) + "}"),
    ("application/strategic-merge-patch+json", '{"metadata":{"labels":' + deep_json(DEEP) + "}}"),
    ("application/json-patch+json", '[{"op":"add","path":"/data/x","value":' + deep_json(DEEP) + "}]"),
], ids=["merge", "strategic", "json-patch"])
def test_deeply_nested_patch_is_400_and_changes_nothing(c: httpx.Client, cm: str, media: str, body: str) -> None:
    before = c.get(cm).json()
    message = status(c.patch(cm, content=body, headers={"content-type": media}), 400, "BadRequest")
    assert message == "invalid character '{' exceeded max depth"
    assert c.get(cm).json() == before


def test_deeply_nested_apply_is_400_and_changes_nothing(c: httpx.Client, cm: str) -> None:
    before = c.get(cm).json()
    applied = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\nx: " + deep_json(DEEP) + "\n"
    resp = c.patch(f"{cm}?fieldManager=m", content=applied, headers={"content-type": "application/apply-patch+yaml"})
    assert status(resp, 400, "BadRequest") == (f"error decoding YAML: error converting YAML to JSON: yaml: exceeded "
                                               f"max depth of {MAX_DEPTH}")
    assert c.get(cm).json() == before


@pytest.fixture(scope="module")
def free_form(c: httpx.Client) -> str:
    """The collection URL of a custom resource whose spec takes any JSON."""
    group = f"g{uuid.uuid4().hex[:6]}.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"blobs.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "blobs", "singular": "blob", "kind": "Blob", "listKind": "BlobList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
    assert c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    url = f"/apis/{group}/v1/namespaces/default/blobs"
    c.post("/api/v1/namespaces", json={"metadata": {"name": "default"}})
    eventually_sync(lambda: c.get(url).status_code == 200 or None, timeout=20)
    return url


def test_nesting_at_the_limit_passes_every_stage(c: httpx.Client, free_form: str) -> None:
    """An object exactly as deep as the decoder allows is created, read, listed, watched, patched
    three ways and applied: no later stage runs out of stack on what the decoder let through."""
    obj = {"apiVersion": free_form.split("/")[2] + "/v1", "kind": "Blob", "metadata": {"name": "deep"},
           "spec": nested(MAX_DEPTH - 2)}
    assert c.post(free_form, json=obj).status_code == 201
    url = f"{free_form}/deep"
    assert c.get(url).json()["spec"] == obj["spec"]
    assert c.get(free_form).status_code == 200
    table = c.get(free_form, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert table.status_code == 200
    with c.stream("GET", f"{free_form}?watch=1&resourceVersion=0&timeoutSeconds=1") as watch:
        assert watch.status_code == 200 and b"deep" in watch.read()
    spec = nested(MAX_DEPTH - 2, leaf=2)
    for media, body in [("application/merge-patch+json", {"spec": spec}),
                        ("application/json-patch+json", [{"op": "replace", "path": "/spec", "value": spec}])]:
        resp = c.patch(url, content=json.dumps(body), headers={"content-type": media})
        assert resp.status_code == 200 and resp.json()["spec"] == spec, resp.text
    applied = {**obj, "spec": nested(MAX_DEPTH - 2, leaf=3)}
    resp = c.patch(f"{url}?fieldManager=m&force=true", content=json.dumps(applied),
                   headers={"content-type": "application/apply-patch+yaml"})
    assert resp.status_code == 200 and resp.json()["spec"] == applied["spec"], resp.text
    assert c.post(free_form, json={**obj, "metadata": {"name": "deeper"}, "spec": nested(MAX_DEPTH)}).status_code == 400


# --- strings and numbers -------------------------------------------------------------------
def test_lone_surrogates_decode_to_the_replacement_character(c: httpx.Client, ns: str) -> None:
    """As Go's decoder: `\\ud800` becomes U+FFFD, so the object is stored and every encoder can write it."""
    base = f"/api/v1/namespaces/{ns}/configmaps"
    resp = c.post(base, content=b'{"metadata":{"name":"sur"},"data":{"k":"x\\ud800y\\udc00"}}', headers=JSON)
    assert resp.status_code == 201, resp.text
    assert c.get(f"{base}/sur").json()["data"] == {"k": "x\ufffdy\ufffd"}
    assert c.get(f"{base}/sur", headers={"accept": "application/vnd.kubernetes.protobuf"}).status_code == 200
    assert c.get(base, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).status_code == 200
    for meta in ('"name":"s\\ud800"', '"name":"sur2","labels":{"a":"x\\ud800"}',
                 '"name":"sur3","annotations":{"a\\ud800":"x"}'):
        resp = c.post(base, content=b'{"metadata":{' + meta.encode() + b"}}", headers=JSON)
        status(resp, 422, "Invalid")
    absent(c, f"{base}/sur2")
    absent(c, f"{base}/sur3")


def _pod(name: str, cpu: str) -> str:
    return ('{"metadata":{"name":"' + name + '"},"spec":{"containers":[{"name":"c","image":"x",'
            '"resources":{"requests":{"cpu":' + cpu + "}}}]}}")


def test_nan_quantity_is_refused_and_not_stored(c: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/pods"
    message = status(c.post(base, content=_pod("nan", "NaN"), headers=JSON), 400, "BadRequest")
    assert "json parse error: invalid character 'N' looking for beginning of value" in message
    message = status(c.post(base, content=_pod("nan", '"NaN"'), headers=JSON), 422, "Invalid")
    assert ("spec.containers[0].resources.requests[cpu]: Invalid value: \"NaN\": quantities must match the regular "
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") in message
    message = status(c.post(base, content=_pod("nan", "1e400"), headers=JSON), 400, "BadRequest")
    assert "json: cannot unmarshal number 1e400 into Go value of type float64" in message
    absent(c, f"{base}/nan")


def test_out_of_range_integer_is_400(c: httpx.Client, ns: str) -> None:
    body = ('{"metadata":{"name":"big"},"spec":{"terminationGracePeriodSeconds":99999999999999999999,'
            '"containers":[{"name":"c","image":"x"}]}}')
    message = status(c.post(f"/api/v1/namespaces/{ns}/pods", content=body, headers=JSON), 400, "BadRequest")
    assert message == ('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number '
                       '99999999999999999999 into Go struct field spec.terminationGracePeriodSeconds of type int64')
    absent(c, f"/api/v1/namespaces/{ns}/pods/big")


def test_timestamp_out_of_range_is_400_and_not_stored(c: httpx.Client, ns: str) -> None:
    body = {"metadata": {"name": "ts"}, "spec": {"containers": [{"name": "c", "image": "x"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                                       "lastTransitionTime": "99999-01-01T00:00:00Z"}]}}
    message = status(c.post(f"/api/v1/namespaces/{ns}/pods", json=body), 400, "BadRequest")
    assert message == ('Pod in version "v1" cannot be handled as a Pod: parsing time "99999-01-01T00:00:00Z" as '
                       '"2006-01-02T15:04:05Z07:00": cannot parse "9-01-01T00:00:00Z" as "-"')
    absent(c, f"/api/v1/namespaces/{ns}/pods/ts")


# --- query parameters ----------------------------------------------------------------------
@pytest.mark.parametrize("query, message", [
    ("limit=99999999999999999999", 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("limit=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("limit=1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    ("watch=1&timeoutSeconds=99999999999999999999",
     'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
])
def test_bad_integer_query_parameter_is_400(c: httpx.Client, ns: str, query: str, message: str) -> None:
    assert status(c.get(f"/api/v1/namespaces/{ns}/configmaps?{query}"), 400, "BadRequest") == message


@pytest.mark.parametrize("rv", ["abc", "-1", "18446744073709551616", "+5", "1_0"])
def test_bad_resource_version_is_400(c: httpx.Client, ns: str, rv: str) -> None:
    for query in (f"resourceVersion={rv}", f"resourceVersion={rv}&resourceVersionMatch=NotOlderThan",
                  f"watch=1&resourceVersion={rv}"):
        resp = c.get(f"/api/v1/namespaces/{ns}/configmaps", params=dict(p.split("=") for p in query.split("&")))
        assert status(resp, 400, "BadRequest") == f"invalid resource version: {rv}"


@pytest.mark.parametrize("token", ["garbage", "aGVsbG8=", "eyJhIjoxfQ==", "eyJydiI6MSwic3RhcnQiOiIvZXRjIn0="])
def test_garbage_continue_is_400(c: httpx.Client, ns: str, token: str) -> None:
    resp = c.get(f"/api/v1/namespaces/{ns}/configmaps", params={"limit": "1", "continue": token})
    assert status(resp, 400, "BadRequest").startswith("invalid continue token")


# --- size ----------------------------------------------------------------------------------
def test_body_over_3_mib_is_413_and_not_stored(c: httpx.Client, ns: str) -> None:
    body = {"metadata": {"name": "big"}, "data": {"a": "x" * (4 << 20)}}
    resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json=body)
    assert status(resp, 413, "RequestEntityTooLarge") == "Request entity too large: limit is 3145728"
    absent(c, f"/api/v1/namespaces/{ns}/configmaps/big")


def alias_bomb(name: str, levels: int = 9) -> str:
    """A ControllerRevision whose `data` expands to 10^levels strings (the billion laughs)."""
    lines = ["apiVersion: apps/v1", "kind: ControllerRevision", f"metadata: {{name: {name}}}", "revision: 1", "data:",
             '  l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"  l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


class _CappedApiServer(ApiServerHarness):
    """The API server under an address-space limit: growing past it kills the process or fails its allocations."""

    def __init__(self, workdir: Path, *, etcd_endpoint: str, cap_bytes: int) -> None:
        self.cap_bytes = cap_bytes
        super().__init__(workdir, etcd_endpoint=etcd_endpoint)

    def argv(self) -> list[str]:
        return ["prlimit", f"--as={self.cap_bytes}", "--", *super().argv()]


@pytest.fixture(scope="module")
def capped(etcd_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHarness]:
    with _CappedApiServer(tmp_path_factory.mktemp("capped"), etcd_endpoint=etcd_endpoint,
                          cap_bytes=2 << 30) as harness:
        yield harness


def test_yaml_alias_bomb_is_400_under_a_memory_cap(capped: ApiServerHarness) -> None:
    with httpx.Client(base_url=capped.server, verify=ssl.create_default_context(cafile=str(capped.pki.ca_cert)),
                      headers={"Authorization": f"Bearer {capped.token('admin')}"}, timeout=60) as c:
        c.post("/api/v1/namespaces", json={"metadata": {"name": "default"}})
        base = "/apis/apps/v1/namespaces/default/controllerrevisions"
        resp = c.post(base, content=alias_bomb("bomb"), headers={"content-type": "application/yaml"})
        assert status(resp, 400, "BadRequest").startswith(
            "the object provided is unrecognized (must be of type ControllerRevision): error converting YAML to "
            "JSON: yaml: document contains excessive aliasing")
        resp = c.patch(f"{base}/bomb?fieldManager=m", content=alias_bomb("bomb"),
                       headers={"content-type": "application/apply-patch+yaml"})
        assert status(resp, 400, "BadRequest") == ("error decoding YAML: error converting YAML to JSON: yaml: "
                                                   "document contains excessive aliasing")
        assert capped.process.running
        assert c.get("/readyz").status_code == 200
        absent(c, f"{base}/bomb")
        # A document with a few aliases is still fine.
        resp = c.post(base, content=alias_bomb("small", levels=1), headers={"content-type": "application/yaml"})
        assert resp.status_code == 201, resp.text
        assert len(resp.json()["data"]["l1"]) == 10


# --- stored objects decode as their types --------------------------------------------------
def test_node_with_empty_taint_is_422_and_not_stored(c: httpx.Client) -> None:
    resp = c.post("/api/v1/nodes", json={"metadata": {"name": "tainted"}, "spec": {"taints": [{}]}})
    assert status(resp, 422, "Invalid") == ('Node "tainted" is invalid: [spec.taints[0].key: Required value, '
                                            'spec.taints[0].effect: Required value]')
    absent(c, "/api/v1/nodes/tainted")


def test_null_list_items_are_judged_as_empty_objects_and_null_fields_are_dropped(c: httpx.Client, ns: str) -> None:
    """As Go decodes them: a null item is the zero struct (so 422 here), a null field is absent."""
    binding = {"metadata": {"name": "nulls"}, "subjects": [None],
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}}
    resp = c.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", json=binding)
    assert status(resp, 422, "Invalid") == ('RoleBinding "nulls" is invalid: [subjects[0].kind: Required value, '
                                            'subjects[0].name: Required value]')
    absent(c, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings/nulls")
    created = c.post(f"/api/v1/namespaces/{ns}/configmaps",
                     json={"metadata": {"name": "nulls", "labels": None, "annotations": None}, "data": None})
    assert created.status_code == 201, created.text
    stored = c.get(f"/api/v1/namespaces/{ns}/configmaps/nulls").json()
    assert "data" not in stored and "labels" not in stored["metadata"]


def _merge(c: httpx.Client, url: str, patch: dict[str, Any]) -> httpx.Response:
    return c.patch(url, json=patch, headers={"content-type": "application/merge-patch+json"})


def test_what_is_accepted_decodes_with_the_official_client(c: httpx.Client, ns: str) -> None:
    """Odd but accepted objects read back through the official client's typed models; the odd writes that
    would break it (conditions, addresses, owner references missing required fields) are refused."""
    client = ApiClient()
    node = "/api/v1/nodes/odd-node"
    pod = f"/api/v1/namespaces/{ns}/pods/odd"
    assert c.post("/api/v1/nodes", json={"metadata": {"name": "odd-node"},
                                         "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}).status_code == 201
    assert c.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "odd", "labels": None, "managedFields": [{}]},
        "spec": {"containers": [{"name": "c", "image": "x", "env": [{"name": "E"}]}],
                 "tolerations": [{}]}}).status_code == 201
    assert c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "odd"}, "data": None}
                  ).status_code == 201
    assert _merge(c, f"{pod}/status", {"status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "0001-01-01T00:00:00Z"}]}}).status_code == 200
    refused: list[tuple[str, dict[str, Any]]] = [
        (f"{node}/status", {"status": {"conditions": [{}]}}), (f"{node}/status", {"status": {"addresses": [{}]}}),
        (f"{pod}/status", {"status": {"containerStatuses": [{}]}}), (pod, {"metadata": {"ownerReferences": [{}]}})]
    for url, patch in refused:
        status(_merge(c, url, patch), 422, "Invalid")
    for url, model in [(node, "V1Node"), (pod, "V1Pod"), (f"/api/v1/namespaces/{ns}/configmaps/odd", "V1ConfigMap"),
                       ("/api/v1/nodes", "V1NodeList"), (f"/api/v1/namespaces/{ns}/pods", "V1PodList")]:
        client.deserialize(c.get(url).text, model, "application/json")
