"""kubectl's JSONPath templates as pkctl renders them (`-o jsonpath=...`)."""

from __future__ import annotations

import pytest

from kube.jsonpath import JSONPathError, render

POD_LIST = {"kind": "List", "items": [
    {"metadata": {"name": "a", "labels": {"app": "web"}},
     "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIP": "10.0.0.1"}},
    {"metadata": {"name": "b"},
     "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]}},
]}


@pytest.mark.parametrize(("template", "expected"), [
    ("{.items[*].metadata.name}", "a b"),
    (".items[0].metadata.name", "a"),  # kubectl's relaxed form, without braces
    ("{.items[-1].status.phase}", "Pending"),
    ("{.items[0:1].metadata.name}", "a"),
    ("{.items[*].status.podIP}", "10.0.0.1"),  # missing fields print nothing
    ('{.items[?(@.status.phase=="Running")].metadata.name}', "a"),
    ('{.items[*].status.conditions[?(@.type=="Ready")].status}', "True False"),
    ("{.items[?(@.metadata.labels)].metadata.name}", "a"),
    ("{..podIP}", "10.0.0.1"),
    ("{.items[0].metadata.labels}", '{"app": "web"}'),
    ("{.items[0].metadata.labels['app']}", "web"),
    ('{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}', "a\tRunning\nb\tPending\n"),
    ("name={.items[0].metadata.name}!", "name=a!"),
    ("{.kind}", "List"),
])
def test_templates_render_as_kubectl_prints_them(template: str, expected: str) -> None:
    assert render(template, POD_LIST) == expected


@pytest.mark.parametrize("template", ["{.items[*", "{range .items[*]}{.metadata.name}", "{end}", "{.items"])
def test_malformed_templates_are_errors(template: str) -> None:
    with pytest.raises(JSONPathError):
        render(template, POD_LIST)
