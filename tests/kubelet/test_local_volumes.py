"""The kubelet's local-path volume manager against a real API server, as node-2 (the Node
authorizer): it publishes its volume dir on its Node, and removes exactly the `pvc-*`
directories whose PersistentVolume is gone."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from kube.api import Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod
from kube.client import RESTClient
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kubelet.local_volumes import LocalVolumeManager
from kubelet.volumes.claims import claim_host_path
from kubelet.volumes.payloads import VolumeError

NODE = "node-2"


@pytest_asyncio.fixture
async def admin(api: ApiServerHarness) -> AsyncIterator[RESTClient]:
    async with api.client("admin") as client:
        yield client


async def _volume(admin: RESTClient, name: str, path: Path) -> None:
    await admin.create(PersistentVolume.model_validate({"metadata": {"name": name}, "spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
        "hostPath": {"path": str(path), "type": "DirectoryOrCreate"}}}))


async def test_publishes_dir_and_removes_directories_of_deleted_volumes(api: ApiServerHarness, admin: RESTClient,
                                                                        tmp_path: Path) -> None:
    volumes = tmp_path / "volumes"
    await admin.create(Node.model_validate({"metadata": {"name": NODE}}))
    kept, deleted = volumes / "pvc-kept-1", volumes / "pvc-gone-1"
    await _volume(admin, kept.name, kept)
    for path in (kept, deleted, volumes / "not-a-volume"):
        path.mkdir(parents=True)
        (path / "data").write_text("x")
    async with api.client(NODE) as client:
        manager = LocalVolumeManager(client, node_name=NODE, volume_dir=str(volumes), period=0.2)
        task = asyncio.create_task(manager.run())
        try:
            async def published() -> bool:
                node = await admin.get(Node, NODE)
                return (node.metadata.annotations or {}).get("picokube.io/local-volume-dir") == str(volumes)
            await eventually(published, timeout=10, message="the volume dir on the Node")
            await eventually(lambda: asyncio.to_thread(lambda: not deleted.exists()), timeout=10,
                             message="the orphaned directory removed")
            assert (kept / "data").read_text() == "x"
            assert (volumes / "not-a-volume" / "data").exists()
            await admin.delete(PersistentVolume, kept.name)
            await asyncio.sleep(0.5)  # two sweeps: a volume held by its protection finalizer still exists
            assert (kept / "data").exists()
            await admin.patch(PersistentVolume, kept.name, {"metadata": {"finalizers": None}})
            await eventually(lambda: asyncio.to_thread(lambda: not kept.exists()), timeout=10,
                             message="the directory of the deleted volume removed")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_claim_host_path_waits_for_binding_and_creates_the_directory(api: ApiServerHarness, admin: RESTClient,
                                                                             tmp_path: Path) -> None:
    ns = f"lv-{uuid.uuid4().hex[:6]}"
    await admin.create(Namespace.model_validate({"metadata": {"name": ns}}))
    await admin.create(PersistentVolumeClaim.model_validate({"metadata": {"name": "data", "namespace": ns}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}}))
    # The Node authorizer lets node-2 read the claim only once a pod bound to it uses the claim.
    await admin.create(Pod.model_validate({"metadata": {"name": "user", "namespace": ns}, "spec": {
        "nodeName": NODE, "containers": [{"name": "c", "image": "busybox:1.36"}],
        "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "o", "persistentVolumeClaim": {"claimName": "other"}}]}}))
    target = tmp_path / "volumes" / "pvc-late"
    async with api.client(NODE) as client:
        async def mountable() -> str | None:
            try:
                return await claim_host_path(client, namespace=ns, claim="data")
            except VolumeError:
                return None
        with pytest.raises(VolumeError, match=f"error processing PVC {ns}/data: PVC is not bound"):
            await claim_host_path(client, namespace=ns, claim="data")
        with pytest.raises(VolumeError, match=f'error processing PVC {ns}/other: .*"other" not found'):
            await claim_host_path(client, namespace=ns, claim="other")
        await _volume(admin, target.name, target)
        await admin.patch(PersistentVolumeClaim, "data", {"spec": {"volumeName": target.name}}, ns)
        await admin.patch(PersistentVolumeClaim, "data", {"status": {"phase": "Bound"}}, ns, subresource="status")
        assert await eventually(mountable, timeout=10, message="the claim mountable") == str(target)
        assert target.is_dir() and target.stat().st_mode & 0o777 == 0o777
