"""A sandbox that cannot be created is reported as upstream does, not only logged; and a kubelet
whose pod subnet cannot address its pod capacity refuses to start."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kube.api import Event, Namespace, Pod
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from tests.kubelet.running import running_kubelet

pytestmark = pytest.mark.timeout(120)


def _pod(ns: str, name: str) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns},
                               "spec": {"nodeName": "node-1", "terminationGracePeriodSeconds": 0,
                                        "containers": [{"name": "main", "image": "busybox"}]}})


async def test_no_address_left_gives_failed_create_pod_sandbox(api: ApiServerHarness, tmp_path: Path) -> None:
    # A /30 has one address for a pod: the second pod's sandbox cannot get one.
    async with api.client("admin") as admin, running_kubelet(api, tmp_path, node="node-1", pod_cidr="10.244.9.0/30"):
        ns = f"sb-{uuid.uuid4().hex[:6]}"
        await admin.create(Namespace.model_validate({"metadata": {"name": ns}}))
        await admin.create(_pod(ns, "first"))
        await eventually(lambda: _phase(admin, ns, "first", "Running"), timeout=30, message="first pod Running")
        await admin.create(_pod(ns, "second"))

        async def reported() -> Event | None:
            return next((e for e in (await admin.list(Event, ns)).items
                         if e.reason == "FailedCreatePodSandBox" and e.involved_object.name == "second"), None)

        event = await eventually(reported, timeout=30, message="a FailedCreatePodSandBox event")
        assert event.type == "Warning"
        assert event.message and event.message.startswith("Failed to create pod sandbox: ")
        assert "no free IP address" in event.message
        second = await admin.get(Pod, "second", ns)
        assert second.status.phase == "Pending"
        statuses = second.status.container_statuses or []
        assert [s.state.waiting.reason for s in statuses if s.state and s.state.waiting] == ["ContainerCreating"]

        await admin.delete(Pod, "first", ns)  # its address is freed: the retry succeeds
        await eventually(lambda: _phase(admin, ns, "second", "Running"), timeout=60, message="second pod Running")


async def _phase(admin: RESTClient, ns: str, name: str, phase: str) -> bool:
    return (await admin.get(Pod, name, ns)).status.phase == phase


def test_a_capacity_the_pod_subnet_cannot_address_is_refused() -> None:
    out = subprocess.run([sys.executable, "-m", "kubelet", "--node-name", "n", "--runtime", "simulated",
                          "--kubeconfig", "/nonexistent", "--pod-cidr", "10.244.1.0/24",
                          "--node-capacity", "cpu=4,pods=600"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out.stderr
    assert "--pod-cidr 10.244.1.0/24 has addresses for 253 pods, fewer than the node's capacity of 600 pods" \
        in out.stderr
    assert "Traceback" not in out.stderr
