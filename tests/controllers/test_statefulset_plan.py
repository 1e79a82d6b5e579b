"""One sync step of a StatefulSet (`controllers.statefulset.plan.plan_sync`), table-driven:
what is created and deleted under OrderedReady and Parallel, on scale-down and during a
rolling update with a partition."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from controllers.statefulset.identity import split_by_ordinal
from controllers.statefulset.plan import plan_sync, uses_update_revision
from kube.api import Pod, StatefulSet
from tests.controllers.builders import make_pod

NOW = datetime(2024, 1, 2, tzinfo=UTC)


def sts(replicas: int, *, policy: str = "OrderedReady", partition: int | None = 0, **spec: Any) -> StatefulSet:
    strategy = {"type": "OnDelete"} if partition is None else \
        {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}
    return StatefulSet.model_validate({"metadata": {"name": "web", "namespace": "default"},
                                       "spec": {"replicas": replicas, "podManagementPolicy": policy,
                                                "updateStrategy": strategy, **spec}})


def pod(ordinal: int, state: str = "ready") -> Pod:
    builder = make_pod().name(f"web-{ordinal}")
    if state == "ready":
        builder = builder.ready(since="2024-01-01T00:00:00Z")
    elif state == "terminating":
        builder = builder.ready(since="2024-01-01T00:00:00Z").terminating()
    elif state == "failed":
        builder = builder.phase("Failed")
    return builder.obj()


def step(s: StatefulSet, pods: list[Pod], *, revisions: dict[str, str] | None = None
         ) -> tuple[list[int], list[str]]:
    in_range, condemned = split_by_ordinal(s, pods)
    revision_of = {p.metadata.name or "": (revisions or {}).get(p.metadata.name or "", "new") for p in pods}
    plan = plan_sync(s, in_range, condemned, start=0, update_revision="new", revision_of=revision_of, now=NOW)
    return plan.create, [p.metadata.name or "" for p in plan.delete]


@pytest.mark.parametrize(("case", "s", "pods", "revisions", "expected"), [
    ("ordered: the first missing ordinal only", sts(3), [], None, ([0], [])),
    ("ordered: waits for web-0 to be ready", sts(3), [pod(0, "pending")], None, ([], [])),
    ("ordered: next once web-0 is ready", sts(3), [pod(0)], None, ([1], [])),
    ("ordered: a failed pod is deleted first", sts(3), [pod(0, "failed")], None, ([], ["web-0"])),
    ("parallel: every missing ordinal", sts(3, policy="Parallel"), [pod(0, "pending")], None, ([1, 2], [])),
    ("ordered: scale down from the highest", sts(1), [pod(0), pod(1), pod(2)], None, ([], ["web-2"])),
    ("ordered: one deletion at a time", sts(1), [pod(0), pod(1), pod(2, "terminating")], None, ([], [])),
    ("ordered: no scale-down while a pod is unready", sts(1), [pod(0, "pending"), pod(1)], None, ([], [])),
    ("parallel: scale down at once", sts(1, policy="Parallel"), [pod(0), pod(1), pod(2)], None,
     ([], ["web-2", "web-1"])),
    ("rolling: highest outdated ordinal first", sts(3), [pod(0), pod(1), pod(2)],
     {"web-0": "old", "web-1": "old", "web-2": "old"}, ([], ["web-2"])),
    ("rolling: waits for the updated pod", sts(3), [pod(0), pod(1), pod(2, "pending")],
     {"web-0": "old", "web-1": "old"}, ([], [])),
    ("rolling: the partition is kept", sts(3, partition=2), [pod(0), pod(1), pod(2)],
     {"web-0": "old", "web-1": "old"}, ([], [])),
    ("on delete: nothing is deleted for an update", sts(2, partition=None), [pod(0), pod(1)],
     {"web-0": "old", "web-1": "old"}, ([], [])),
])
def test_plan_sync(case: str, s: StatefulSet, pods: list[Pod], revisions: dict[str, str] | None,
                   expected: tuple[list[int], list[str]]) -> None:
    assert step(s, pods, revisions=revisions) == expected, case


def test_min_ready_seconds_holds_the_next_ordinal() -> None:
    s = sts(2, minReadySeconds=60)
    just_ready = make_pod().name("web-0").ready(since="2024-01-01T23:59:30Z").obj()
    assert step(s, [just_ready]) == ([], [])
    assert step(s, [pod(0)]) == ([1], [])


@pytest.mark.parametrize(("partition", "ordinal", "update"), [(2, 1, False), (2, 2, True), (None, 0, True)])
def test_created_pods_below_the_partition_keep_the_current_revision(partition: int | None, ordinal: int,
                                                                    update: bool) -> None:
    assert uses_update_revision(sts(3, partition=partition), ordinal, 0) is update
