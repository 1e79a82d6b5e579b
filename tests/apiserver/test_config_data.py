"""Secrets and ConfigMaps as upstream stores and refuses them, seen over HTTP."""

from __future__ import annotations

import base64

import httpx


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_string_data_is_merged_into_data_and_dropped(c: httpx.Client, ns: str) -> None:
    body = {"metadata": {"name": "s1"}, "data": {"a": b64("old"), "b": b64("kept")}, "stringData": {"a": "new"}}
    created = c.post(f"/api/v1/namespaces/{ns}/secrets", json=body)
    assert created.status_code == 201, created.text
    stored = c.get(f"/api/v1/namespaces/{ns}/secrets/s1").json()
    assert stored["data"] == {"a": b64("new"), "b": b64("kept")} and "stringData" not in stored
    assert stored["type"] == "Opaque"
    patched = c.patch(f"/api/v1/namespaces/{ns}/secrets/s1", json={"stringData": {"c": "x"}},
                      headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200 and patched.json()["data"]["c"] == b64("x") and "stringData" not in patched.json()


def test_invalid_base64_is_refused_as_undecodable(c: httpx.Client, ns: str) -> None:
    secret = {"metadata": {"name": "bad64"}, "data": {"k": "not base64!"}}
    resp = c.post(f"/api/v1/namespaces/{ns}/secrets", json=secret)
    assert resp.status_code == 400, resp.text
    assert resp.json()["message"] == ('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
                                      "input byte 3")
    assert c.get(f"/api/v1/namespaces/{ns}/secrets/bad64").status_code == 404


def test_over_one_mebibyte_is_too_long(c: httpx.Client, ns: str) -> None:
    big = "x" * (1024 * 1024 + 1)
    resp = c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "big"}, "data": {"k": big}})
    assert resp.status_code == 422, resp.text
    assert "Too long: must have at most 1048576 bytes" in resp.json()["message"]
    resp = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "big"}, "stringData": {"k": big}})
    assert resp.status_code == 422, resp.text
    assert resp.json()["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "data",
                                                 "message": "Too long: must have at most 1048576 bytes"}]


def test_keys_type_and_immutability(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
                                                            "data": {"bad key": ""}})
    assert resp.status_code == 422
    fields = {cause["field"]: cause["message"] for cause in resp.json()["details"]["causes"]}
    assert fields["data[tls.crt]"] == "Required value" and fields["data[tls.key]"] == "Required value"
    assert fields["data[bad key]"].startswith('Invalid value: "bad key": a valid config key must consist of')
    frozen = c.post(f"/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "frozen"}, "immutable": True,
                                                                 "data": {"a": "1"}}).json()
    frozen["data"] = {"a": "2"}
    resp = c.put(f"/api/v1/namespaces/{ns}/configmaps/frozen", json=frozen)
    assert resp.status_code == 422
    assert resp.json()["details"]["causes"][0]["message"] == "Forbidden: field is immutable when `immutable` is set"
    s = c.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "typed"}}).json()
    s["type"] = "kubernetes.io/basic-auth"
    s["data"] = {"username": b64("u")}
    resp = c.put(f"/api/v1/namespaces/{ns}/secrets/typed", json=s)
    assert resp.status_code == 422
    assert resp.json()["details"]["causes"][0]["message"] == 'Invalid value: "kubernetes.io/basic-auth": field is ' \
        "immutable"
