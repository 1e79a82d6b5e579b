"""Checks every kind gets from its schema, with upstream's wording: integer ranges, enums,
required fields and quantities; whatever is refused is not stored."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.apiserver.conftest import causes


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, **spec,
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}


def test_int32_overflow_cannot_be_decoded(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("big", replicas=2**31))
    assert resp.status_code == 400, resp.text
    assert resp.json()["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
                                      "unmarshal number 2147483648 into Go struct field spec.replicas of type int32")
    assert c.get(f"/apis/apps/v1/namespaces/{ns}/deployments/big").status_code == 404
    ok = c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment("edge", replicas=2**31 - 1, paused=True))
    assert ok.status_code == 201, ok.text


def test_enums_and_go_rendered_values(c: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "enum"}, "spec": {
        "tolerations": [{"key": "k", "operator": "Bogus", "effect": "Sometimes"}],
        "containers": [{"name": "c", "image": "busybox", "terminationMessagePolicy": "Loud",
                        "readinessProbe": {"httpGet": {"port": 80, "scheme": "GOPHER"}}}]}}
    got = causes(c.post(f"/api/v1/namespaces/{ns}/pods", json=pod))
    assert got["spec.tolerations[0].operator"] == 'Unsupported value: "Bogus": supported values: "Equal", "Exists"'
    assert got["spec.tolerations[0].effect"] == ('Unsupported value: "Sometimes": supported values: "NoSchedule", '
                                                 '"PreferNoSchedule", "NoExecute"')
    assert got["spec.containers[0].terminationMessagePolicy"].startswith('Unsupported value: "Loud"')
    assert got["spec.containers[0].readinessProbe.httpGet.scheme"] == ('Unsupported value: "GOPHER": supported '
                                                                       'values: "HTTP", "HTTPS"')
    bad = deployment("mismatch")
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    got = causes(c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=bad))
    assert got["spec.template.metadata.labels"] == ('Invalid value: map[string]string{"app":"other"}: `selector` '
                                                    "does not match template `labels`")


def test_required_fields_of_a_node_taint(c: httpx.Client) -> None:
    name = f"n-{uuid.uuid4().hex[:6]}"
    got = causes(c.post("/api/v1/nodes", json={"metadata": {"name": name}, "spec": {"taints": [{}]}}))
    assert got["spec.taints[0].key"] == "Required value" and got["spec.taints[0].effect"] == "Required value"
    assert c.get(f"/api/v1/nodes/{name}").status_code == 404


def test_quantities_out_of_range_or_malformed(c: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "q"}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "resources": {"limits": {"memory": "1e999999", "cpu": "2 cores"}}}]}}
    got = causes(c.post(f"/api/v1/namespaces/{ns}/pods", json=pod))
    assert got["spec.containers[0].resources.limits[memory]"] == ('Invalid value: "1e999999": must be less than or '
                                                                  "equal to 9223372036854775807")
    assert got["spec.containers[0].resources.limits[cpu]"] == (
        "Invalid value: \"2 cores\": quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert c.get(f"/api/v1/namespaces/{ns}/pods/q").status_code == 404
