"""ReplicationControllers against a real API server and controller-manager (no scheduler, no
kubelet: pods stay Pending unless a test reports them Ready): defaults, N pods kept, scaling
through spec and through the scale subresource with the real kubectl, replacement of a
deleted pod, and the table kubectl prints."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from kube.api import Namespace, Pod, ReplicationController
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process
from tests.controllers._kubectl import kubectl

pytestmark = pytest.mark.timeout(180)


@pytest_asyncio.fixture
async def ns(api: ApiServerHarness) -> AsyncIterator[tuple[RESTClient, str]]:
    async with api.client("admin") as client:
        name = f"rc-{uuid.uuid4().hex[:6]}"
        await client.create(Namespace.model_validate({"metadata": {"name": name}}))
        yield client, name


def _rc(name: str, namespace: str, replicas: int) -> ReplicationController:
    return ReplicationController.model_validate({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}},
                                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})


async def _active(client: RESTClient, namespace: str, count: int) -> list[Pod] | None:
    pods = [p for p in (await client.list(Pod, namespace)).items if p.metadata.deletion_timestamp is None]
    return pods if len(pods) == count else None


async def _status(client: RESTClient, namespace: str, name: str, replicas: int) -> ReplicationController | None:
    rc = await client.get(ReplicationController, name, namespace)
    done = rc.status.replicas == replicas and rc.status.observed_generation == rc.metadata.generation
    return rc if done else None


async def test_rc_defaults_keeps_replicas_and_replaces_pods(ns: tuple[RESTClient, str], manager: Process) -> None:
    client, namespace = ns
    rc = await client.create(_rc("web", namespace, 3))
    assert rc.spec.selector == {"app": "web"}  # defaulted from the template's labels
    assert rc.metadata.labels == {"app": "web"}
    pods = await eventually(lambda: _active(client, namespace, 3), timeout=30, message="3 pods")
    for pod in pods:
        ref = pod.metadata.controller_ref()
        assert ref is not None and (ref.api_version, ref.kind, ref.name, ref.uid) == \
            ("v1", "ReplicationController", "web", rc.metadata.uid)
        assert (pod.metadata.name or "").startswith("web-")
    await eventually(lambda: _status(client, namespace, "web", 3), timeout=30, message="status.replicas 3")

    await client.delete(Pod, pods[0].metadata.name or "", namespace, grace_period_seconds=0)
    replaced = await eventually(lambda: _active(client, namespace, 3), timeout=30, message="a replacement")
    assert pods[0].metadata.name not in {p.metadata.name for p in replaced}

    await client.patch(ReplicationController, "web", {"spec": {"replicas": 1}}, namespace)
    await eventually(lambda: _active(client, namespace, 1), timeout=30, message="scaled down to 1")
    await eventually(lambda: _status(client, namespace, "web", 1), timeout=30)


async def test_kubectl_scale_rc_and_get_columns(api: ApiServerHarness, ns: tuple[RESTClient, str],
                                                manager: Process, tmp_path: Path) -> None:
    client, namespace = ns
    await client.create(_rc("front", namespace, 1))
    await eventually(lambda: _active(client, namespace, 1), timeout=30)
    scaled = kubectl(api, "-n", namespace, "scale", "rc/front", "--replicas", "4", cache=tmp_path)
    assert scaled.returncode == 0, scaled.stderr
    assert "replicationcontroller/front scaled" in scaled.stdout
    await eventually(lambda: _active(client, namespace, 4), timeout=30, message="kubectl scale reached the pods")
    await eventually(lambda: _status(client, namespace, "front", 4), timeout=30)

    listed = kubectl(api, "-n", namespace, "get", "rc", "-o", "wide", cache=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    cells = row.split()
    assert (cells[0], cells[1], cells[2], cells[3], cells[5], cells[6], cells[7]) == \
        ("front", "4", "4", "0", "c", "nginx", "app=front")

    scale = kubectl(api, "-n", namespace, "get", "--raw",
                    f"/api/v1/namespaces/{namespace}/replicationcontrollers/front/scale", cache=tmp_path)
    assert scale.returncode == 0, scale.stderr
    assert '"selector":"app=front"' in scale.stdout

    invalid = kubectl(api, "-n", namespace, "create", "-f", "-", cache=tmp_path, stdin=(
        '{"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "bad"}, "spec": {'
        '"selector": {"app": "other"}, "template": {"metadata": {"labels": {"app": "bad"}}, '
        '"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}'))
    assert invalid.returncode != 0
    assert "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"bad\"}: " \
        "`selector` does not match template `labels`" in invalid.stderr
