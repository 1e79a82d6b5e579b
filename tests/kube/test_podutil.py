"""Pod predicates: terminal phases, readiness, availability."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kube.api import Pod
from kube.podutil import (
    is_phase_terminal,
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_ready_time,
)

NOW = datetime(2024, 1, 1, 0, 1, 0, tzinfo=UTC)


def make_pod(*, phase: str | None = None, conditions: list[dict[str, Any]] | None = None) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p", "namespace": "default"},
                               "status": {"phase": phase, "conditions": conditions}})


def ready(status: str = "True", since: str | None = "2024-01-01T00:00:00Z") -> dict[str, Any]:
    return {"type": "Ready", "status": status, "lastTransitionTime": since}


@pytest.mark.parametrize(("phase", "terminal"), [
    ("Succeeded", True), ("Failed", True), ("Running", False), ("Pending", False), ("Unknown", False), (None, False),
])
def test_terminal_phases(phase: str | None, terminal: bool) -> None:
    assert is_phase_terminal(phase) is terminal
    assert is_pod_terminal(make_pod(phase=phase)) is terminal


@pytest.mark.parametrize(("conditions", "expected"), [
    (None, False),
    ([], False),
    ([ready("True")], True),
    ([ready("False")], False),
    ([ready("Unknown")], False),
    ([{"type": "ContainersReady", "status": "True"}], False),
    ([{"type": "PodScheduled", "status": "True"}, ready("True")], True),
])
def test_ready_is_the_ready_condition_true(conditions: list[dict[str, Any]] | None, expected: bool) -> None:
    pod = make_pod(phase="Running", conditions=conditions)
    assert is_pod_ready(pod) is expected
    assert pod.is_ready() is expected


@pytest.mark.parametrize(("condition", "min_ready", "expected"), [
    (ready("True"), 0, True),
    (ready("True"), 60, True),                          # ready exactly 60 s at NOW
    (ready("True"), 61, False),
    (ready("True", since=None), 10, False),             # ready, but since when is unknown
    (ready("True", since="garbage"), 10, False),
    (ready("True", since=None), 0, True),
    (ready("False"), 0, False),
])
def test_available_is_ready_for_min_ready_seconds(condition: dict[str, Any], min_ready: int, expected: bool) -> None:
    pod = make_pod(phase="Running", conditions=[condition])
    assert is_pod_available(pod, min_ready_seconds=min_ready, now=NOW) is expected


def test_ready_time_only_for_ready_pods() -> None:
    assert pod_ready_time(make_pod(conditions=[ready("True")])) == datetime(2024, 1, 1, tzinfo=UTC)
    assert pod_ready_time(make_pod(conditions=[ready("False")])) is None
