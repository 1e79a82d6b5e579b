"""The Deployment controller's pure parts: fenceposts, the rollout plan, status and conditions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from controllers.deployment.annotations import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    REVISION_ANNOTATION,
    new_replicaset_annotations,
)
from controllers.deployment.conditions import AVAILABLE, PROGRESSING, get_condition, set_condition, sync_progress
from controllers.deployment.controller import find_new_and_old
from controllers.deployment.fenceposts import max_surge, max_unavailable, resolve_fenceposts
from controllers.deployment.status import calculate_status
from kube.api import DeploymentCondition, DeploymentStatus
from tests.controllers.builders import make_deployment, make_rs

NOW = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(("replicas", "surge", "unavailable", "expected"), [
    (3, None, None, (1, 0)),      # 25% of 3: surge rounds up, unavailable rounds down
    (4, None, None, (1, 1)),
    (10, "50%", 2, (5, 2)),
    (3, 0, 0, (0, 1)),            # never both zero
    (0, None, None, (0, 1)),
])
def test_resolve_fenceposts(replicas: int, surge: int | str | None, unavailable: int | str | None,
                            expected: tuple[int, int]) -> None:
    d = make_deployment().replicas(replicas).rolling(max_surge=surge, max_unavailable=unavailable).obj()
    assert resolve_fenceposts(d) == expected


def test_recreate_has_no_surge_or_unavailable() -> None:
    d = make_deployment().replicas(4).recreate().obj()
    assert (max_surge(d), max_unavailable(d)) == (0, 0)


def test_max_unavailable_is_capped_at_replicas() -> None:
    d = make_deployment().replicas(2).rolling(max_unavailable=5).obj()
    assert max_unavailable(d) == 2


def test_find_new_ignores_the_hash_label_and_prefers_the_oldest() -> None:
    d = make_deployment().obj()
    other = make_rs().name("other").image("nginx:1.0").obj()
    newer = make_rs().name("newer").obj()
    newer.metadata.creation_timestamp = "2024-01-02T00:00:00Z"
    older = make_rs().name("older").obj()
    older.spec.template.metadata.labels = {"app": "web", "pod-template-hash": "xyz"}
    new, old = find_new_and_old(d, [other, newer, older])
    assert new is older
    assert {rs.metadata.name for rs in old} == {"other", "newer"}
    assert find_new_and_old(d, [other]) == (None, [other])


def test_new_replicaset_annotations() -> None:
    d = make_deployment().replicas(4).obj()
    d.metadata.annotations = {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}",
                              REVISION_ANNOTATION: "9"}
    assert new_replicaset_annotations(d, rev=3) == {
        "team": "a", REVISION_ANNOTATION: "3", DESIRED_REPLICAS_ANNOTATION: "4", MAX_REPLICAS_ANNOTATION: "5"}


def test_status_sums_replicasets() -> None:
    d = make_deployment().replicas(3).obj()
    d.metadata.generation = 4
    new = make_rs().name("new").replicas(3, status=2, ready=2, available=1).obj()
    old = make_rs().name("old").replicas(0, status=1, ready=1, available=1).obj()
    status = calculate_status(d, new_rs=new, replicasets=[new, old], base=DeploymentStatus(collision_count=2),
                              now=NOW)
    assert (status.observed_generation, status.replicas, status.updated_replicas, status.ready_replicas,
            status.available_replicas, status.unavailable_replicas, status.collision_count) == (4, 3, 2, 3, 2, 1, 2)
    available = get_condition(status, AVAILABLE)
    # 25% of 3 rounds down to maxUnavailable 0, so all 3 must be available.
    assert available is not None and (available.status, available.reason) == ("False", "MinimumReplicasUnavailable")


def test_available_condition_follows_max_unavailable() -> None:
    d = make_deployment().replicas(4).obj()  # maxUnavailable 1: 3 available are enough
    for available, expected in ((3, "True"), (2, "False")):
        rs = make_rs().replicas(4, status=4, ready=available, available=available).obj()
        status = calculate_status(d, new_rs=rs, replicasets=[rs], base=DeploymentStatus(), now=NOW)
        cond = get_condition(status, AVAILABLE)
        assert cond is not None and cond.status == expected


def test_set_condition_keeps_transition_time_when_only_the_reason_changes() -> None:
    status = DeploymentStatus(conditions=[DeploymentCondition(type=PROGRESSING, status="True", reason="A",
                                                              last_transition_time="2020-01-01T00:00:00Z")])
    same = DeploymentCondition(type=PROGRESSING, status="True", reason="A", last_transition_time="later")
    set_condition(status, same)
    assert status.conditions is not None and status.conditions[0].last_transition_time == "2020-01-01T00:00:00Z"
    set_condition(status, DeploymentCondition(type=PROGRESSING, status="True", reason="B",
                                              last_transition_time="later"))
    cond = get_condition(status, PROGRESSING)
    assert cond is not None and (cond.reason, cond.last_transition_time) == ("B", "2020-01-01T00:00:00Z")


def _progress(d_replicas: int, rs_status: tuple[int, int, int], old: DeploymentStatus, *,
              now: datetime = NOW) -> DeploymentCondition | None:
    d = make_deployment().replicas(d_replicas).progress_deadline(60).obj()
    d.status = old
    rs = make_rs().name("web-new").replicas(d_replicas, status=rs_status[0], ready=rs_status[1],
                                             available=rs_status[2]).obj()
    status = calculate_status(d, new_rs=rs, replicasets=[rs], base=old, now=now)
    sync_progress(d, status, old=old, new_rs=rs, now=now)
    return get_condition(status, PROGRESSING)


def test_complete_rollout_reports_new_replicaset_available() -> None:
    cond = _progress(3, (3, 3, 3), DeploymentStatus())
    assert cond is not None and (cond.status, cond.reason) == ("True", "NewReplicaSetAvailable")
    assert cond.message == 'ReplicaSet "web-new" has successfully progressed.'


def test_progress_refreshes_last_update_time() -> None:
    started = DeploymentCondition(type=PROGRESSING, status="True", reason="NewReplicaSetCreated",
                                  last_update_time="2024-01-01T11:00:00Z", last_transition_time="2024-01-01T11:00:00Z")
    old = DeploymentStatus(replicas=3, updated_replicas=3, ready_replicas=0, conditions=[started])
    cond = _progress(3, (3, 1, 0), old)
    assert cond is not None and cond.reason == "ReplicaSetUpdated"
    assert cond.last_update_time == "2024-01-01T12:00:00Z"
    assert cond.last_transition_time == "2024-01-01T11:00:00Z"


def test_no_progress_past_the_deadline_times_out() -> None:
    started = DeploymentCondition(type=PROGRESSING, status="True", reason="NewReplicaSetCreated",
                                  last_update_time="2024-01-01T11:00:00Z", last_transition_time="2024-01-01T11:00:00Z")
    old = DeploymentStatus(replicas=3, updated_replicas=3, conditions=[started])
    assert _progress(3, (3, 0, 0), old, now=datetime(2024, 1, 1, 11, 0, 30, tzinfo=UTC)) == started
    cond = _progress(3, (3, 0, 0), old, now=NOW + timedelta(seconds=1))
    assert cond is not None and (cond.status, cond.reason) == ("False", "ProgressDeadlineExceeded")
