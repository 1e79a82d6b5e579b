"""The Job and TTL-after-finished controllers as a real controller-manager against a real API
server (no kubelet: the tests report pods Succeeded or Failed themselves, as a kubelet would)."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Job, Namespace, Pod
from kube.api.batch_v1 import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def manager(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    log = tmp_path_factory.mktemp("cm") / "controller-manager.log"
    proc = api.controller_manager("--job-backoff-base-seconds", "0.2", log_path=log).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest_asyncio.fixture
async def env(api: ApiServerHarness, manager: Process) -> AsyncIterator[tuple[RESTClient, str]]:
    namespace = f"job-{uuid.uuid4().hex[:6]}"
    async with api.client("admin") as client:
        await client.create(Namespace.model_validate({"metadata": {"name": namespace}}))
        yield client, namespace


async def create_job(client: RESTClient, namespace: str, name: str, **spec: Any) -> Job:
    body = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}
    return await client.create(Job.model_validate({"metadata": {"name": name, "namespace": namespace},
                                                   "spec": {**body, **spec}}))


async def job_pods(client: RESTClient, namespace: str, job: Job) -> list[Pod]:
    pods = (await client.list(Pod, namespace)).items
    return [p for p in pods if (ref := p.metadata.controller_ref()) is not None and ref.uid == job.metadata.uid]


def active(pods: list[Pod]) -> list[Pod]:
    return [p for p in pods if p.metadata.deletion_timestamp is None and p.status.phase not in ("Succeeded", "Failed")]


async def finish(client: RESTClient, pod: Pod, phase: str, exit_code: int = 0) -> None:
    """Play the kubelet: the pod's one container terminated with `exit_code`."""
    await client.patch(Pod, pod.metadata.name or "", {"status": {"phase": phase, "containerStatuses": [{
        "name": "c", "image": "busybox", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"terminated": {"exitCode": exit_code}}}]}}, pod.metadata.namespace, subresource="status")


def condition(job: Job, type_: str) -> Any:
    return next((c for c in job.status.conditions or [] if c.type == type_ and c.status == "True"), None)


async def finished(client: RESTClient, job: Job, type_: str) -> Job | None:
    fresh = await client.get(Job, job.metadata.name or "", job.metadata.namespace)
    return fresh if condition(fresh, type_) is not None else None


async def test_completes_with_exactly_the_completions_while_pods_are_deleted(
        env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "five", completions=5, parallelism=2, backoffLimit=100)
    rng = random.Random(7)
    succeeded: set[str] = set()
    violations: list[str] = []  # checked after the loop: eventually() would retry past an assert

    async def step() -> Job | None:
        pods = await job_pods(client, ns, job)
        running = active(pods)
        if len(running) > 2:
            violations.append(f"{len(running)} active pods at parallelism 2")
        for pod in running:
            if JOB_TRACKING_FINALIZER not in (pod.metadata.finalizers or []):
                violations.append(f"{pod.metadata.name} has no tracking finalizer")
            if rng.random() < 0.3:
                await client.delete(Pod, pod.metadata.name or "", ns)
            else:
                await finish(client, pod, "Succeeded")
                succeeded.add(pod.metadata.uid or "")
                if rng.random() < 0.3:  # gone before (or while) being counted: still counted once
                    await client.delete(Pod, pod.metadata.name or "", ns)
        return await finished(client, job, "Complete")

    done = await eventually(step, timeout=60, interval=0.3, message="the Job never completed")
    assert violations == []
    assert done.status.succeeded == 5 and len(succeeded) == 5
    assert done.status.completion_time is not None and condition(done, "SuccessCriteriaMet") is not None
    assert not (done.status.uncounted_terminated_pods and (done.status.uncounted_terminated_pods.succeeded
                                                           or done.status.uncounted_terminated_pods.failed))

    async def released() -> bool:
        return all(JOB_TRACKING_FINALIZER not in (p.metadata.finalizers or []) for p in await job_pods(client, ns, job))
    await eventually(released, timeout=20)


async def test_backoff_limit_fails_a_crashing_job(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "crash", backoffLimit=2)

    async def step() -> Job | None:
        for pod in active(await job_pods(client, ns, job)):
            await finish(client, pod, "Failed", exit_code=1)
        return await finished(client, job, "Failed")

    failed = await eventually(step, timeout=60, interval=0.3)
    assert failed.status.failed == 3 and condition(failed, "Failed").reason == "BackoffLimitExceeded"
    assert condition(failed, "FailureTarget") is not None


async def test_pod_failure_policy_fail_job_on_exit_code(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "policy", backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]})
    pod = (await eventually(lambda: _active_pods(client, ns, job), timeout=20))[0]
    await finish(client, pod, "Failed", exit_code=42)
    failed = await eventually(lambda: finished(client, job, "Failed"), timeout=20)
    assert condition(failed, "Failed").reason == "PodFailurePolicy"
    assert "failed with exit code 42 matching FailJob rule at index 0" in condition(failed, "Failed").message


async def _active_pods(client: RESTClient, ns: str, job: Job, count: int = 1) -> list[Pod] | None:
    pods = active(await job_pods(client, ns, job))
    return pods if len(pods) == count else None


async def _no_active_pods(client: RESTClient, ns: str, job: Job) -> bool:
    return not active(await job_pods(client, ns, job))


async def test_indexed_job_gives_each_pod_its_index(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "idx", completions=3, parallelism=3, completionMode="Indexed")
    pods = await eventually(lambda: _active_pods(client, ns, job, 3), timeout=20)
    indexes = sorted(int((p.metadata.annotations or {})[JOB_COMPLETION_INDEX_ANNOTATION]) for p in pods)
    assert indexes == [0, 1, 2]
    for pod in pods:
        env_var = pod.spec.containers[0].env[0]  # type: ignore[index]
        assert env_var.name == "JOB_COMPLETION_INDEX" and env_var.value_from is not None
        assert env_var.value_from.field_ref is not None
        assert env_var.value_from.field_ref.field_path == (
            "metadata.annotations['batch.kubernetes.io/job-completion-index']")
    for pod in pods:
        await finish(client, pod, "Succeeded")
    done = await eventually(lambda: finished(client, job, "Complete"), timeout=20)
    assert done.status.completed_indexes == "0-2" and done.status.succeeded == 3


async def test_suspend_deletes_pods_and_resume_recreates_them(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "susp", parallelism=2, completions=4, suspend=True)
    await eventually(lambda: finished(client, job, "Suspended"), timeout=20)
    assert active(await job_pods(client, ns, job)) == []
    await client.patch(Job, "susp", {"spec": {"suspend": False}}, ns)
    await eventually(lambda: _active_pods(client, ns, job, 2), timeout=20)
    await client.patch(Job, "susp", {"spec": {"suspend": True}}, ns)
    await eventually(lambda: _no_active_pods(client, ns, job), timeout=20)
    suspended = await eventually(lambda: finished(client, job, "Suspended"), timeout=20)
    assert suspended.status.failed in (None, 0)


async def test_active_deadline_fails_the_job(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "late", activeDeadlineSeconds=2)
    failed = await eventually(lambda: finished(client, job, "Failed"), timeout=30)
    assert condition(failed, "Failed").reason == "DeadlineExceeded"
    await eventually(lambda: _no_active_pods(client, ns, job), timeout=20)


async def test_ttl_after_finished_deletes_the_job_and_its_pods(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "ttl", ttlSecondsAfterFinished=1)
    pod = (await eventually(lambda: _active_pods(client, ns, job), timeout=20))[0]
    await finish(client, pod, "Succeeded")

    async def gone() -> bool:
        try:
            await client.get(Job, "ttl", ns)
        except NotFound:
            return not await job_pods(client, ns, job)
        return False
    await eventually(gone, timeout=40)


async def test_deleting_a_running_job_deletes_its_pods(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "doomed", parallelism=2, completions=2)
    await eventually(lambda: _active_pods(client, ns, job, 2), timeout=20)
    await client.delete(Job, "doomed", ns, propagation_policy="Background")

    async def gone() -> bool:
        return not await job_pods(client, ns, job)
    await eventually(gone, timeout=40, message="the deleted Job's pods were never released and removed")


async def test_restarts_count_against_the_backoff_limit_with_on_failure(env: tuple[RESTClient, str]) -> None:
    client, ns = env
    job = await create_job(client, ns, "restarts", backoffLimit=2, template={"spec": {
        "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}})
    pod = (await eventually(lambda: _active_pods(client, ns, job), timeout=20))[0]
    await client.patch(Pod, pod.metadata.name or "", {"status": {"phase": "Running", "containerStatuses": [{
        "name": "c", "image": "busybox", "imageID": "", "ready": False, "restartCount": 3,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}, ns, subresource="status")
    failed = await eventually(lambda: finished(client, job, "Failed"), timeout=20)
    assert condition(failed, "Failed").reason == "BackoffLimitExceeded"
    await eventually(lambda: _no_active_pods(client, ns, job), timeout=20)
