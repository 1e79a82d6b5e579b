"""Which pods the taint eviction controller leaves on a NoExecute-tainted node, and for how long."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.nodelifecycle.controller import NOT_READY, UNREACHABLE
from controllers.tainteviction.timing import tolerates_for_now
from kube.api import Pod, Taint

TAINT = Taint(key=UNREACHABLE, effect="NoExecute", time_added="2024-01-01T00:00:00Z")
ADDED = 1_000.0


def pod_with(*tolerations: dict[str, Any]) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p", "namespace": "default"},
                               "spec": {"containers": [{"name": "c", "image": "busybox"}],
                                        "tolerations": list(tolerations)}})


@pytest.mark.parametrize(("tolerations", "elapsed", "stays"), [
    ((), 0.0, False),
    (({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"},), 1e9, True),
    (({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},), 299.0, True),
    (({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},), 300.0, False),
    # Equal with another value does not tolerate the (valueless) taint: evicted at once
    (({"key": UNREACHABLE, "operator": "Equal", "value": "other", "effect": "NoExecute"},), 0.0, False),
    (({"key": UNREACHABLE, "operator": "Equal", "effect": "NoExecute"},), 1e9, True),
    (({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute"},), 0.0, False),
    (({"key": UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"},), 0.0, False),
    (({"operator": "Exists"},), 1e9, True),
    (({"key": UNREACHABLE, "effect": "NoExecute"},), 0.0, True),     # no operator: Equal to ""
])
def test_tolerates_for_now(tolerations: tuple[dict[str, Any], ...], elapsed: float, stays: bool) -> None:
    assert tolerates_for_now(pod_with(*tolerations), TAINT, since=ADDED, now=ADDED + elapsed) is stays
