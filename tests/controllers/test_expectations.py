"""ControllerExpectations: adds counted, deletes tracked per pod key, a TTL that never blocks forever."""

from __future__ import annotations

from controllers.replicaset.expectations import EXPECTATIONS_TTL, ControllerExpectations
from kube.clock import FakeClock

KEY = "default/web"


def make() -> tuple[ControllerExpectations, FakeClock]:
    clock = FakeClock(1000.0)
    return ControllerExpectations(clock=clock), clock


def test_no_record_is_satisfied() -> None:
    exp, _ = make()
    assert exp.satisfied(KEY)
    assert exp.time_until_expired(KEY) is None


def test_creations_are_satisfied_once_every_add_was_observed() -> None:
    exp, _ = make()
    exp.expect_creations(KEY, 3)
    for _ in range(2):
        exp.creation_observed(KEY)
        assert not exp.satisfied(KEY)
    exp.creation_observed(KEY)
    assert exp.satisfied(KEY)
    assert exp.pending(KEY) == (0, 0)


def test_observations_for_other_keys_do_not_count() -> None:
    exp, _ = make()
    exp.expect_creations(KEY, 1)
    exp.creation_observed("default/other")
    assert not exp.satisfied(KEY)


def test_deletions_count_each_expected_pod_once() -> None:
    exp, _ = make()
    exp.expect_deletions(KEY, ["default/p1", "default/p2"])
    exp.deletion_observed(KEY, "default/p1")
    exp.deletion_observed(KEY, "default/p1")  # deletionTimestamp update, then the real delete
    exp.deletion_observed(KEY, "default/unrelated")
    assert not exp.satisfied(KEY)
    assert exp.pending(KEY) == (0, 1)
    exp.deletion_observed(KEY, "default/p2")
    assert exp.satisfied(KEY)


def test_unmet_expectations_expire_after_the_ttl() -> None:
    exp, clock = make()
    exp.expect_creations(KEY, 2)
    clock.step(EXPECTATIONS_TTL - 1)
    assert not exp.satisfied(KEY)
    assert exp.time_until_expired(KEY) == 1.0
    clock.step(2)
    assert exp.satisfied(KEY)


def test_expire_within_shortens_but_never_extends() -> None:
    exp, clock = make()
    exp.expect_creations(KEY, 1)
    exp.expire_within(KEY, 30)
    assert exp.time_until_expired(KEY) == 30.0
    exp.expire_within(KEY, 60)
    assert exp.time_until_expired(KEY) == 30.0
    clock.step(31)
    assert exp.satisfied(KEY)


def test_setting_expectations_replaces_the_record() -> None:
    exp, _ = make()
    exp.expect_creations(KEY, 5)
    exp.expect_deletions(KEY, ["default/p1"])
    assert exp.pending(KEY) == (0, 1)


def test_delete_expectations_forgets_the_key() -> None:
    exp, _ = make()
    exp.expect_creations(KEY, 1)
    exp.delete_expectations(KEY)
    assert exp.satisfied(KEY)
    exp.creation_observed(KEY)  # a late event for a forgotten key is harmless
    assert exp.pending(KEY) == (0, 0)
