"""`x-kubernetes-validations` CEL rules on a CRD schema, against a real API server process:
every failed rule is a cause of one 422 (message, messageExpression, reason, fieldPath),
transition rules see `oldSelf` on update only, and a rule that does not compile refuses
the CRD."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from apiserver.apiextensions import cel
from kube.testing.eventually import eventually_sync

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RANGES = "/apis/cel.example.com/v1/namespaces/default/ranges"

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "mode": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "mode is immutable"}]},
        "tags": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() <= 5", "messageExpression": "'tag ' + self + ' is too long'"}]}},
    },
    "x-kubernetes-validations": [
        {"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min"},
        {"rule": "self.max < 100", "reason": "FieldValueForbidden"},
        {"rule": "!has(self.mode) || self.mode in ['a', 'b']",
         "messageExpression": "'unknown mode ' + self.mode"},
    ],
}


def crd(spec_schema: dict[str, Any], name: str = "ranges") -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{name}.cel.example.com"},
            "spec": {"group": "cel.example.com", "scope": "Namespaced",
                     "names": {"plural": name, "singular": name.rstrip("s"), "kind": name.capitalize().rstrip("s")},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec_schema}}}}]}}


def obj(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cel.example.com/v1", "kind": "Range", "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def ranges(admin_http: httpx.Client) -> str:
    r = admin_http.post(CRDS, json=crd(SPEC))
    assert r.status_code == 201, r.text
    eventually_sync(lambda: admin_http.get(RANGES).status_code == 200, timeout=10, message="ranges served")
    return RANGES


def test_every_failed_rule_is_a_cause(admin_http: httpx.Client, ranges: str) -> None:
    r = admin_http.post(ranges, json=obj("r1", min=200, max=150, mode="z", tags=["ok", "much-too-long"]))
    assert r.status_code == 422, r.text
    status = r.json()
    causes = {(c["field"], c["reason"], c["message"]) for c in status["details"]["causes"]}
    assert causes == {
        ("spec.min", "FieldValueInvalid", 'Invalid value: "object": min must not exceed max'),
        ("spec", "FieldValueForbidden", "Forbidden: failed rule: self.max < 100"),
        ("spec", "FieldValueInvalid", 'Invalid value: "object": unknown mode z'),
        ("spec.tags[1]", "FieldValueInvalid", 'Invalid value: "string": tag much-too-long is too long'),
    }
    assert status["message"].startswith('Range.cel.example.com "r1" is invalid: [')
    assert admin_http.post(ranges, json=obj("r1", min=1, max=2, mode="a", tags=["x"])).status_code == 201


def test_transition_rule_sees_old_self_on_update_only(admin_http: httpx.Client, ranges: str) -> None:
    assert admin_http.post(ranges, json=obj("r2", min=1, max=2, mode="a")).status_code == 201
    r = admin_http.patch(f"{ranges}/r2", json={"spec": {"mode": "b"}},
                         headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 422, r.text
    assert r.json()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "field": "spec.mode", "message": 'Invalid value: "string": mode is immutable'}]
    r = admin_http.patch(f"{ranges}/r2", json={"spec": {"max": 3}},
                         headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text


def test_a_rule_that_does_not_compile_refuses_the_crd(admin_http: httpx.Client) -> None:
    schema = copy.deepcopy(SPEC)
    schema["x-kubernetes-validations"] = [{"rule": "self.min <="}, {"rule": "self.min > 0", "reason": "Bogus"},
                                          {"rule": "true", "messageExpression": "'a' +"}]
    r = admin_http.post(CRDS, json=crd(schema, name="brokens"))
    assert r.status_code == 422, r.text
    causes = {c["field"]: c["message"] for c in r.json()["details"]["causes"]}
    base = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    assert causes[f"{base}[0].rule"].startswith('Invalid value: "self.min <=": compilation failed: ERROR: <input>:1:')
    assert causes[f"{base}[1].reason"].startswith('Unsupported value: "Bogus": supported values: ')
    assert "messageExpression compilation failed" in causes[f"{base}[2].messageExpression"]
    assert admin_http.get(f"{CRDS}/brokens.cel.example.com").status_code == 404


@pytest.mark.parametrize(("value", "old", "want"), [
    ({"min": 1, "max": 2}, None, []),
    ({"min": 3, "max": 2}, None, ["spec.min"]),
    ({"min": 1, "max": 2, "mode": "a"}, {"min": 1, "max": 2, "mode": "b"}, ["spec.mode"]),
    ({"min": 1, "max": 2, "mode": "a"}, {"min": 1, "max": 2}, []),  # no old value: the transition rule is skipped
    ({"max": 2}, None, ["spec"]),  # self.min is absent: an evaluation error fails the rule
])
def test_validate(value: dict[str, Any], old: dict[str, Any] | None, want: list[str]) -> None:
    schema = {"type": "object", "properties": {"spec": SPEC}}
    errs = cel.validate({"spec": value}, schema) if old is None else \
        cel.validate({"spec": value}, schema, {"spec": old})
    assert [e.field for e in errs] == want, [str(e) for e in errs]


def test_an_evaluation_error_is_worded_as_upstream() -> None:
    errs = cel.validate({"spec": {"max": 2}}, {"type": "object", "properties": {"spec": SPEC}})
    assert [str(e) for e in errs] == [
        'spec: Invalid value: "object": no such key: min evaluating rule: min must not exceed max']
