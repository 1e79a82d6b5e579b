"""Projected volume validation: upstream's field paths and messages, every error at once."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from apiserver.admission.plugins.service_account import token_volume_source
from apiserver.registry.pod_validation import validate_pod_spec
from apiserver.validation.projected import validate_local_non_reserved_path
from kube.errors import FieldError

P = "spec.volumes[0].projected"


def errors(projected: dict[str, Any]) -> dict[str, str]:
    spec = {"containers": [{"name": "c", "image": "busybox"}], "volumes": [{"name": "v", "projected": projected}]}
    return {e.field: e.message for e in validate_pod_spec(spec, "spec")}


def test_the_admission_volume_is_valid() -> None:
    assert errors(token_volume_source()) == {}


@pytest.mark.parametrize(("source", "field", "message"), [
    ({"serviceAccountToken": {"path": "token", "expirationSeconds": 300}},
     f"{P}.sources[0].serviceAccountToken.expirationSeconds",
     "Invalid value: 300: may not specify a duration less than 10 minutes"),
    ({"serviceAccountToken": {"path": "token", "expirationSeconds": (1 << 32) + 1}},
     f"{P}.sources[0].serviceAccountToken.expirationSeconds",
     "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"),
    ({"serviceAccountToken": {"expirationSeconds": 3600}}, f"{P}.path", "Required value"),
    ({"serviceAccountToken": {"path": "/abs", "expirationSeconds": 3600}}, f"{P}.path",
     'Invalid value: "/abs": must be a relative path'),
    ({"configMap": {"items": [{"key": "k", "path": "p"}]}}, f"{P}.sources[0].configMap.name", "Required value"),
    ({"secret": {"name": "s", "items": [{"key": "k", "path": "a/../b"}]}}, f"{P}.sources[0].secret.items[0].path",
     "Invalid value: \"a/../b\": must not contain '..'"),
    ({"secret": {"name": "s", "items": [{"key": "k", "path": "..b"}]}}, f"{P}.sources[0].secret.items[0].path",
     "Invalid value: \"..b\": must not start with '..'"),
    ({"configMap": {"name": "c", "items": [{"path": "p", "mode": 0o1000}]}}, f"{P}.sources[0].configMap.items[0].mode",
     "Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive"),
    ({"downwardAPI": {"items": [{"path": "n", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}]}},
     f"{P}.sources[0].downwardAPI.fieldRef.fieldPath",
     'Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", '
     '"metadata.name", "metadata.namespace", "metadata.uid"'),
    ({"downwardAPI": {"items": [{"path": "n"}]}}, f"{P}.sources[0].downwardAPI",
     "Required value: one of fieldRef and resourceFieldRef is required"),
    ({"configMap": {"name": "c"}, "secret": {"name": "s"}}, f"{P}.sources[0]",
     "Forbidden: may not specify more than 1 volume type per source"),
])
def test_a_bad_source_is_refused_at_upstreams_path(source: dict[str, Any], field: str, message: str) -> None:
    found = errors({"sources": [source]})
    assert found.get(field) == message, found


def test_duplicate_paths_and_modes_are_reported_together() -> None:
    found = errors({"defaultMode": -1, "sources": [
        {"configMap": {"name": "c", "items": [{"key": "a", "path": "same"}]}},
        {"secret": {"name": "s", "items": [{"key": "b", "path": "same"}]}}]})
    assert found == {f"{P}.defaultMode": "Invalid value: -1: must be a number between 0 and 0777 (octal), both "
                                         "inclusive",
                     P: 'Invalid value: "s": conflicting duplicate paths'}


def test_label_subscripts_are_supported() -> None:
    assert errors({"sources": [{"downwardAPI": {"items": [
        {"path": "l", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app']"}}]}}]}) == {}


def test_local_paths() -> None:
    errs: list[FieldError] = []
    for ok in ("a", "a/b", "a..b", "..."):
        validate_local_non_reserved_path(errs, "p", ok)
    assert [str(e) for e in errs] == ["p: Invalid value: \"...\": must not start with '..'"]


def test_the_api_refuses_an_invalid_projection(c: httpx.Client, ns: str) -> None:
    pod = {"metadata": {"name": "bad"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "volumes": [{"name": "v", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 60}}]}}]}}
    resp = c.post(f"/api/v1/namespaces/{ns}/pods", json=pod)
    assert resp.status_code == 422
    assert resp.json()["message"] == (
        'Pod "bad" is invalid: spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: '
        "Invalid value: 60: may not specify a duration less than 10 minutes")
