"""Toleration matching, as core/v1 Toleration.ToleratesTaint decides it, and NoExecute time limits."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kube.api import Taint, Toleration
from kube.taints import (
    toleration_seconds,
    toleration_tolerates_taint,
    tolerations_tolerate_taint,
)

TAINT = Taint(key="dedicated", value="gpu", effect="NoSchedule")


def tol(**fields: Any) -> Toleration:
    return Toleration.model_validate(fields)


@pytest.mark.parametrize(("toleration", "expected"), [
    ({"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, True),
    ({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}, True),             # no operator means Equal
    ({"key": "dedicated", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}, False),
    ({"key": "dedicated", "operator": "Equal", "effect": "NoSchedule"}, False),       # "" is not "gpu"
    ({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}, True),
    ({"key": "dedicated", "operator": "Exists"}, True),                               # any effect
    ({"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
    ({"operator": "Exists"}, True),                                                   # tolerates everything
    ({"operator": "Exists", "effect": "PreferNoSchedule"}, False),
    ({"key": "dedicated", "operator": "Gt", "value": "gpu"}, False),                  # unknown operator
])
def test_toleration_tolerates_taint(toleration: dict[str, Any], expected: bool) -> None:
    assert toleration_tolerates_taint(tol(**toleration), TAINT) is expected


def test_a_taint_without_value_matches_equal_with_empty_value_only() -> None:
    bare = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
    assert toleration_tolerates_taint(tol(key=bare.key, operator="Equal", effect="NoExecute"), bare)
    assert not toleration_tolerates_taint(tol(key=bare.key, operator="Equal", value="x", effect="NoExecute"), bare)


def test_any_toleration_is_enough() -> None:
    assert tolerations_tolerate_taint([tol(key="other", operator="Exists"), tol(operator="Exists")], TAINT)
    assert not tolerations_tolerate_taint([tol(key="other", operator="Exists")], TAINT)
    assert not tolerations_tolerate_taint(None, TAINT)
    assert not tolerations_tolerate_taint([], TAINT)


UNREACHABLE = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")


@pytest.mark.parametrize(("tolerations", "expected"), [
    ([], None),
    ([{"key": UNREACHABLE.key, "operator": "Equal", "value": "other", "effect": "NoExecute"}], None),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}], None),
    ([{"key": UNREACHABLE.key, "operator": "Exists", "effect": "NoSchedule"}], None),
    ([{"key": UNREACHABLE.key, "operator": "Exists", "effect": "NoExecute"}], math.inf),
    ([{"key": UNREACHABLE.key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}], 300.0),
    ([{"key": UNREACHABLE.key, "operator": "Exists", "tolerationSeconds": -5}], 0.0),
    # several matching: the smallest limit wins, a limitless one does not lift it
    ([{"operator": "Exists"},
      {"key": UNREACHABLE.key, "operator": "Exists", "tolerationSeconds": 60},
      {"key": UNREACHABLE.key, "operator": "Exists", "tolerationSeconds": 30}], 30.0),
    # a non-matching limit does not count
    ([{"key": UNREACHABLE.key, "operator": "Exists"},
      {"key": UNREACHABLE.key, "operator": "Equal", "value": "x", "tolerationSeconds": 1}], math.inf),
])
def test_toleration_seconds(tolerations: list[dict[str, Any]], expected: float | None) -> None:
    assert toleration_seconds([tol(**t) for t in tolerations], UNREACHABLE) == expected
