"""Label and field selectors: the query-string grammar, metav1.LabelSelector, and matching."""

from __future__ import annotations

from typing import Any

import pytest

from kube.selectors import (
    format_label_selector,
    parse_field_selector,
    parse_label_selector,
    selector_from_label_selector,
)

LABELS = {"app": "web", "tier": "frontend", "example.com/team": "a"}


@pytest.mark.parametrize(("text", "matches"), [
    ("", True),
    ("app=web", True),
    ("app==web", True),
    ("app=db", False),
    ("app!=db", True),
    ("app!=web", False),
    ("missing!=x", True),              # != also matches objects without the label
    ("tier in (frontend,backend)", True),
    ("tier in (backend)", False),
    ("tier notin (backend, cache)", True),
    ("tier notin (frontend)", False),
    ("missing notin (x)", True),
    ("missing in (x)", False),
    ("app", True),
    ("missing", False),
    ("!missing", True),
    ("!app", False),
    ("example.com/team=a", True),
    ("app=web,tier in (frontend),!legacy", True),
    ("app=web,tier=backend", False),   # comma is AND
    ("  app = web  ", True),
    ("app=", False),                   # the empty value is a value
    ("missing=", False),
    ("missing==", False),
])
def test_label_selector_matching(text: str, matches: bool) -> None:
    assert parse_label_selector(text).matches(LABELS) is matches


def test_the_empty_selector_matches_objects_without_labels() -> None:
    assert parse_label_selector(None).matches(None)
    assert parse_label_selector("").empty()
    assert not parse_label_selector("app").matches(None)
    assert parse_label_selector("!app").matches(None)


@pytest.mark.parametrize("text", ["app=web=x", "app in web", "=web", "app=we b", "-app=web", "app=web,,=x",
                                  "tier in (a", "app=-web"])
def test_label_selector_syntax_errors(text: str) -> None:
    with pytest.raises(ValueError):
        parse_label_selector(text)


@pytest.mark.parametrize("text", ["app=web", "app!=web", "tier in (a,b)", "tier notin (a,b)", "app", "!app",
                                  "app=web,tier in (a,b),!legacy"])
def test_formatting_is_the_inverse_of_parsing(text: str) -> None:
    selector = parse_label_selector(text)
    assert format_label_selector(selector) == text
    assert parse_label_selector(format_label_selector(selector)) == selector


@pytest.mark.parametrize(("selector", "matches"), [
    ({}, True),
    ({"matchLabels": {"app": "web"}}, True),
    ({"matchLabels": {"app": "web", "tier": "backend"}}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend", "x"]}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["frontend"]}]}, False),
    ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, False),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "legacy", "operator": "DoesNotExist"}]}, True),
])
def test_metav1_label_selectors(selector: dict[str, Any], matches: bool) -> None:
    assert selector_from_label_selector(selector).matches(LABELS) is matches


def test_a_metav1_selector_with_an_unknown_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="Gt"):
        selector_from_label_selector({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


POD_FIELDS = {"metadata.name": "web-1", "spec.nodeName": "node-1", "status.phase": "Running"}


@pytest.mark.parametrize(("text", "matches"), [
    ("", True),
    ("spec.nodeName=node-1", True),
    ("spec.nodeName==node-1", True),
    ("spec.nodeName=node-2", False),
    ("status.phase!=Failed", True),
    ("status.phase!=Running", False),
    ("spec.nodeName=", False),
    ("spec.schedulerName=", True),   # unset fields read as ""
    ("spec.nodeName=node-1,status.phase!=Succeeded", True),
    ("spec.nodeName=node-1,status.phase=Pending", False),
])
def test_field_selector_matching(text: str, matches: bool) -> None:
    selector = parse_field_selector(text)
    assert selector.matches(lambda f: POD_FIELDS.get(f, "")) is matches


def test_field_selector_lists_its_fields() -> None:
    assert parse_field_selector("spec.nodeName=a,status.phase!=b").fields() == {"spec.nodeName", "status.phase"}
    assert parse_field_selector(None).empty()


@pytest.mark.parametrize("text", ["spec.nodeName", "=node-1"])
def test_field_selector_syntax_errors(text: str) -> None:
    with pytest.raises(ValueError):
        parse_field_selector(text)
