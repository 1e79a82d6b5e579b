"""The Job controller's pure parts, table-driven: completion indexes, pod failure policy
matching, the failure backoff, the pods it builds, and when a finished Job's TTL runs out;
and the kubelet's downward-API env for an Indexed Job's pods."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from controllers.job.indexes import format_indexes, parse_indexes, pending_indexes
from controllers.job.pod_control import pod_for_job
from controllers.job.pods import is_pod_failed, match_failure_policy
from controllers.job.status import MAX_BACKOFF, backoff_delay
from controllers.ttlafterfinished.controller import expires_in
from kube.api import Container, Job, Pod
from kube.api.batch_v1 import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kubelet.cri.interface import PodSandbox, SandboxState
from kubelet.pod_sync import container_env


@pytest.mark.parametrize(("indexes", "text"), [
    ([], ""), ([0], "0"), ([0, 1, 2], "0-2"), ([1, 3, 4, 5, 7], "1,3-5,7"), ([5, 4, 4], "4-5")])
def test_indexes_round_trip(indexes: list[int], text: str) -> None:
    assert format_indexes(indexes) == text
    assert parse_indexes(text, 10) == set(indexes)


def test_parse_ignores_out_of_range_and_junk() -> None:
    assert parse_indexes("0-3,x,9", 3) == {0, 1, 2}


def test_pending_indexes_skip_completed_and_active() -> None:
    assert pending_indexes(completions=6, completed={0, 2}, active={1}, count=2) == [3, 4]


@pytest.mark.parametrize(("failures", "delay"), [(0, 0.0), (1, 10.0), (2, 20.0), (4, 80.0), (10, MAX_BACKOFF)])
def test_backoff_doubles_from_ten_seconds_up_to_six_minutes(failures: int, delay: float) -> None:
    assert backoff_delay(failures, base=10.0) == delay


def job(**spec: Any) -> Job:
    return Job.model_validate({"metadata": {"name": "j", "namespace": "ns", "uid": "u1"},
                               "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}, **spec}})


def failed_pod(exit_code: int, conditions: list[dict[str, str]] | None = None) -> Pod:
    return Pod.model_validate({"metadata": {"name": "p", "namespace": "ns"}, "status": {
        "phase": "Failed", "conditions": conditions or [],
        "containerStatuses": [{"name": "c", "image": "i", "state": {"terminated": {"exitCode": exit_code}}}]}})


def test_failure_policy_rules_apply_in_order() -> None:
    j = job(podFailurePolicy={"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [42]}}]})
    fail = match_failure_policy(j, failed_pod(42))
    assert fail is not None and fail.action == "FailJob"
    assert fail.message == "Container c for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
    ignored = match_failure_policy(j, failed_pod(42, [{"type": "DisruptionTarget", "status": "True"}]))
    assert ignored is not None and ignored.action == "Ignore"
    counted = match_failure_policy(j, failed_pod(1))
    assert counted is not None and counted.action == "Count"
    assert match_failure_policy(job(), failed_pod(42)) is None


def test_a_pod_deleted_before_it_succeeded_counts_as_failed() -> None:
    deleting = Pod.model_validate({"metadata": {"name": "p", "deletionTimestamp": "2024-01-01T00:00:00Z"},
                                   "status": {"phase": "Running"}})
    assert is_pod_failed(deleting)
    deleting.status.phase = "Succeeded"
    assert not is_pod_failed(deleting)


def test_pods_carry_the_finalizer_owner_and_index() -> None:
    plain = pod_for_job(job(), None)
    assert plain.metadata.generate_name == "j-" and plain.metadata.finalizers == [JOB_TRACKING_FINALIZER]
    owner = (plain.metadata.owner_references or [])[0]
    assert (owner.kind, owner.uid, owner.controller) == ("Job", "u1", True)
    indexed = pod_for_job(job(completionMode="Indexed", completions=3), 2)
    assert indexed.metadata.generate_name == "j-2-" and indexed.spec.hostname == "j-2"
    assert (indexed.metadata.annotations or {})[JOB_COMPLETION_INDEX_ANNOTATION] == "2"
    sandbox = PodSandbox(id="s", name="p", namespace="ns", uid="u", attempt=0, state=SandboxState.READY,
                         created_at=0.0, ip="10.0.0.2")
    container: Container = indexed.spec.containers[0]
    assert container_env(indexed, container, sandbox, "10.0.0.1") == {"JOB_COMPLETION_INDEX": "2"}


def test_ttl_counts_from_the_finish() -> None:
    now = datetime(2024, 1, 1, 0, 1, 0, tzinfo=UTC)
    finished = {"conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    with_ttl = job(ttlSecondsAfterFinished=100)
    assert expires_in(with_ttl, now) is None  # not finished
    with_ttl.status = Job.model_validate({"status": finished}).status
    assert expires_in(with_ttl, now) == 40.0
    no_ttl = job()
    no_ttl.status = with_ttl.status
    assert expires_in(no_ttl, now) is None
