"""Validation as Kubernetes does it: every error at once as 422 Invalid with field paths, and
immutable fields refused on update; nothing invalid is stored."""

from __future__ import annotations

from typing import Any

import httpx

from tests.apiserver.conftest import causes


def test_every_pod_error_at_once(c: httpx.Client, ns: str) -> None:
    pod: dict[str, Any] = {"metadata": {"name": "bad"}, "spec": {"restartPolicy": "Sometimes", "containers": [
        {"name": "Web", "image": "busybox", "ports": [{"containerPort": 70000, "protocol": "ICMP"}]},
        {"name": "db", "resources": {"requests": {"cpu": "2", "memory": "lots"}, "limits": {"cpu": "1"}}},
        {"name": "db", "image": "x", "imagePullPolicy": "Sometimes"}]}}
    got = causes(c.post(f"/api/v1/namespaces/{ns}/pods", json=pod))
    assert set(got) >= {"spec.restartPolicy", "spec.containers[0].name", "spec.containers[0].ports[0].containerPort",
                        "spec.containers[0].ports[0].protocol", "spec.containers[1].image",
                        "spec.containers[1].resources.requests[memory]", "spec.containers[1].resources.requests",
                        "spec.containers[2].name", "spec.containers[2].imagePullPolicy"}
    assert "must be less than or equal to cpu limit of 1" in got["spec.containers[1].resources.requests"]
    assert got["spec.containers[2].name"] == 'Duplicate value: "db"'
    assert c.get(f"/api/v1/namespaces/{ns}/pods/bad").status_code == 404


def test_pod_spec_is_immutable_but_images_are_not(c: httpx.Client, ns: str) -> None:
    created = c.post(f"/api/v1/namespaces/{ns}/pods", json={
        "metadata": {"name": "fixed"}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}).json()
    created["spec"]["containers"][0]["image"] = "busybox:2"
    updated = c.put(f"/api/v1/namespaces/{ns}/pods/fixed", json=created)
    assert updated.status_code == 200, updated.text
    body = updated.json()
    body["spec"]["restartPolicy"] = "Never"
    refused = c.put(f"/api/v1/namespaces/{ns}/pods/fixed", json=body)
    assert "pod updates may not change fields other than" in causes(refused)["spec"]


def test_deployment_selector_is_immutable(c: httpx.Client, ns: str) -> None:
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sel"},
         "spec": {"selector": {"matchLabels": {"app": "a"}},
                  "template": {"metadata": {"labels": {"app": "a", "tier": "b"}},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    created = c.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=d).json()
    created["spec"]["selector"] = {"matchLabels": {"tier": "b"}}
    refused = c.put(f"/apis/apps/v1/namespaces/{ns}/deployments/sel", json=created)
    assert causes(refused)["spec.selector"].endswith("field is immutable")


def test_label_and_annotation_syntax(c: httpx.Client, ns: str) -> None:
    bad = {"metadata": {"name": "labels", "labels": {"bad key!": "x", "app": "-nope-", "example.com/ok": "fine"},
                        "annotations": {"a" * 64: "v"}}, "data": {}}
    resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json=bad)
    body = resp.json()
    assert resp.status_code == 422, resp.text
    messages = [cause["message"] for cause in body["details"]["causes"]]
    assert any('"bad key!": name part must consist of alphanumeric' in m for m in messages)
    assert any('"-nope-": a valid label must be an empty string' in m for m in messages)
    assert any("name part must be no more than 63 characters" in m for m in messages)
    ok = {"metadata": {"name": "labels", "labels": {"example.com/ok": "fine", "empty": ""}}}
    assert c.post(f"/api/v1/namespaces/{ns}/configmaps", json=ok).status_code == 201
