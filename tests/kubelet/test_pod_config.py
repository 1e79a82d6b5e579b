"""The kubelet against a real API server gives containers what their pods consume: a missing
ConfigMap holds the container in CreateContainerConfigError (env) or the pod in
ContainerCreating with FailedMount (volume) until it appears; values reach the container's
environment and files, updates reach mounted files, and a deleted pod's volumes go away."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kube.api import ConfigMap, Event, Namespace, Pod, Secret, Service, ServiceAccount
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.cri.simulated import SimulatedRuntime
from kubelet.kubelet import Kubelet
from tests.kubelet.running import running_kubelet

pytestmark = pytest.mark.timeout(120)

CIDR = "10.244.9.0/24"
NODE = "node-2"


@pytest_asyncio.fixture
async def kubelet(api: ApiServerHarness, tmp_path: Path) -> AsyncIterator[tuple[Kubelet, SimulatedRuntime]]:
    async with running_kubelet(api, tmp_path, node=NODE, pod_cidr=CIDR, node_status_update_frequency=1.0) as running:
        yield running


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as c:
        yield c


@pytest_asyncio.fixture
async def ns(admin: RESTClient) -> str:
    name = f"cfg-{uuid.uuid4().hex[:6]}"
    await admin.create(Namespace.model_validate({"metadata": {"name": name}}))
    return name


def _pod(ns: str, name: str, container: dict[str, Any]) -> Pod:
    return Pod.model_validate({"metadata": {"name": name, "namespace": ns},
                               "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 0,
                                        "containers": [{"name": "main", "image": "busybox",
                                                        "command": ["sleep", "3600"], **container}]}})


def _waiting(pod: Pod) -> tuple[str | None, str | None]:
    for cs in pod.status.container_statuses or [] if pod.status else []:
        if cs.state is not None and cs.state.waiting is not None:
            return cs.state.waiting.reason, cs.state.waiting.message
    return None, None


async def test_missing_config_map_holds_the_container_until_it_exists(
        kubelet: tuple[Kubelet, SimulatedRuntime], admin: RESTClient, ns: str) -> None:
    _, runtime = kubelet
    await admin.create(_pod(ns, "p", {"env": [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "mode"}}},
        {"name": "GREETING", "value": "mode=$(MODE)"}]}))

    async def config_error() -> bool:
        return _waiting(await admin.get(Pod, "p", ns)) == ("CreateContainerConfigError",
                                                           'configmap "app" not found')
    await eventually(config_error, timeout=15)

    async def failed_event() -> bool:
        events = await admin.list(Event, ns)
        return any(e.reason == "Failed" and e.message == 'Error: configmap "app" not found' for e in events.items)
    await eventually(failed_event, timeout=15)

    await admin.create(ConfigMap.model_validate({"metadata": {"name": "app", "namespace": ns},
                                                 "data": {"mode": "fast"}}))

    async def running() -> Pod | None:
        pod = await admin.get(Pod, "p", ns)
        return pod if pod.status is not None and pod.status.phase == "Running" else None
    pod = await eventually(running, timeout=20)
    cid = (pod.status.container_statuses or [])[0].container_id if pod.status else None
    assert cid is not None
    env = runtime.container_config(cid.split("://", 1)[-1]).env
    assert env["MODE"] == "fast" and env["GREETING"] == "mode=fast"
    api_service = await admin.get(Service, "kubernetes", "default")
    assert env["KUBERNETES_SERVICE_HOST"] == api_service.spec.cluster_ip  # in-cluster clients find the API


async def _running_container(admin: RESTClient, ns: str, name: str) -> str:
    async def running() -> str | None:
        pod = await admin.get(Pod, name, ns)
        if pod.status is None or pod.status.phase != "Running":
            return None
        cid = (pod.status.container_statuses or [])[0].container_id
        return cid.split("://", 1)[-1] if cid else None
    return await eventually(running, timeout=20)


async def test_missing_volume_source_fails_mount_until_it_exists_then_updates_reach_files(
        kubelet: tuple[Kubelet, SimulatedRuntime], admin: RESTClient, ns: str) -> None:
    k, runtime = kubelet
    pod = _pod(ns, "vol", {"volumeMounts": [{"name": "config", "mountPath": "/etc/config"},
                                            {"name": "info", "mountPath": "/etc/podinfo"},
                                            {"name": "scratch", "mountPath": "/scratch"},
                                            {"name": "config", "mountPath": "/etc/only-mode", "subPath": "mode"}]})
    pod.spec.volumes = Pod.model_validate({"spec": {"volumes": [
        {"name": "config", "configMap": {"name": "settings", "items": [{"key": "mode", "path": "mode"}]}},
        {"name": "info", "downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
        {"name": "scratch", "emptyDir": {}}]}}).spec.volumes
    created = await admin.create(pod)

    async def failed_mount() -> bool:
        events = await admin.list(Event, ns)
        return any(e.reason == "FailedMount" and e.message == 'MountVolume.SetUp failed for volume "config" : '
                   'configmap "settings" not found' for e in events.items)
    await eventually(failed_mount, timeout=15)
    current = await admin.get(Pod, "vol", ns)
    assert current.status is not None and current.status.phase == "Pending"
    assert _waiting(current)[0] == "ContainerCreating"

    await admin.create(ConfigMap.model_validate({"metadata": {"name": "settings", "namespace": ns},
                                                 "data": {"mode": "fast", "unused": "x"}}))
    cid = await _running_container(admin, ns, "vol")
    files = runtime.container_files(cid)
    assert files["/etc/config/mode"] == "fast" and "/etc/config/unused" not in files
    assert files["/etc/podinfo/name"] == "vol" and files["/etc/only-mode"] == "fast"

    cm = await admin.get(ConfigMap, "settings", ns)
    cm.data = {"mode": "slow"}
    await admin.update(cm)

    async def updated() -> bool:  # the periodic resync rewrites the volume (every 10 s here)
        return runtime.container_files(cid)["/etc/config/mode"] == "slow"
    await eventually(updated, timeout=25)

    pod_dir = k.syncer.volumes.pod_dir(str(created.metadata.uid)) if k.syncer.volumes else None
    assert pod_dir is not None and pod_dir.is_dir()
    await admin.delete(Pod, "vol", ns)

    async def cleaned() -> bool:
        return not pod_dir.exists()
    await eventually(cleaned, timeout=20)


async def _let_node_request_tokens(admin: RESTClient, ns: str) -> None:
    """Grant the node token requests in `ns` through RBAC, whatever the Node authorizer decides."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    await admin.request("POST", f"{rbac}/namespaces/{ns}/roles", body={
        "metadata": {"name": "tokens"},
        "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}]})
    await admin.request("POST", f"{rbac}/namespaces/{ns}/rolebindings", body={
        "metadata": {"name": "tokens"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                    "name": "tokens"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": f"system:node:{NODE}"}]})


async def test_secret_and_projected_token_files(kubelet: tuple[Kubelet, SimulatedRuntime], admin: RESTClient,
                                               ns: str) -> None:
    _, runtime = kubelet
    await _let_node_request_tokens(admin, ns)
    await admin.create(ServiceAccount.model_validate({"metadata": {"name": "default", "namespace": ns}}))
    await admin.create(Secret.model_validate({"metadata": {"name": "creds", "namespace": ns},
                                              "data": {"password": base64.b64encode(b"s3cret").decode()}}))
    pod = _pod(ns, "tok", {"volumeMounts": [{"name": "creds", "mountPath": "/etc/creds"},
                                            {"name": "api", "mountPath": "/var/run/secrets/kubernetes.io/sa"}]})
    pod.spec.volumes = Pod.model_validate({"spec": {"volumes": [
        {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
        {"name": "api", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
            {"downwardAPI": {"items": [{"path": "namespace",
                                        "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}]}}).spec.volumes
    pod.spec.service_account_name = "default"
    await admin.create(pod)
    cid = await _running_container(admin, ns, "tok")
    files = runtime.container_files(cid)
    assert files["/etc/creds/password"] == "s3cret"
    assert files["/var/run/secrets/kubernetes.io/sa/namespace"] == ns
    token = files["/var/run/secrets/kubernetes.io/sa/token"]
    claims = token.split(".")[1]
    payload = base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)).decode()
    assert f'"sub":"system:serviceaccount:{ns}:default"' in payload


async def test_a_finished_pods_volumes_are_torn_down(kubelet: tuple[Kubelet, SimulatedRuntime], admin: RESTClient,
                                                     ns: str) -> None:
    k, _ = kubelet
    pod = _pod(ns, "done", {"command": ["sh", "-c", "sleep 2; exit 0"],
                            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]})
    pod.spec.restart_policy = "Never"
    pod.spec.volumes = Pod.model_validate({"spec": {"volumes": [{"name": "scratch", "emptyDir": {}}]}}).spec.volumes
    created = await admin.create(pod)
    assert k.syncer.volumes is not None
    pod_dir = k.syncer.volumes.pod_dir(str(created.metadata.uid))

    async def set_up() -> bool:
        return (pod_dir / "volumes" / "kubernetes.io~empty-dir" / "scratch").is_dir()
    await eventually(set_up, timeout=15, interval=0.05)

    async def finished_and_clean() -> bool:
        current = await admin.get(Pod, "done", ns)
        return current.status is not None and current.status.phase == "Succeeded" and not pod_dir.exists()
    await eventually(finished_and_clean, timeout=20)
