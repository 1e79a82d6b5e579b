"""The PV binder, the local-path provisioner and the protection controllers, as a real
controller-manager against a real API server: claims bind to the smallest matching volume,
WaitForFirstConsumer claims are provisioned on the node the scheduler selected, released
volumes are kept or deleted as their reclaim policy says, and a claim in use is deleted only
once its pod is gone."""

from __future__ import annotations

import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from kube.api import Event, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, StatefulSet, StorageClass
from kube.client import RESTClient
from kube.errors import NotFound
from kube.testing.apiserver import ApiServerHarness
from kube.testing.eventually import eventually
from kube.testing.process import Process

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def manager(api: ApiServerHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    proc = api.controller_manager(log_path=tmp_path_factory.mktemp("cm") / "controller-manager.log").start()
    try:
        yield proc
    finally:
        code = proc.stop()
        if code not in (0, None, -signal.SIGKILL):
            sys.stderr.write(f"--- controller-manager log ---\n{proc.log()[-20000:]}\n")


def _id() -> str:
    return uuid.uuid4().hex[:6]


class Storage:
    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.namespace = f"pv-{_id()}"

    async def volume(self, name: str, size: str, storage_class: str, **spec: Any) -> None:
        await self.client.create(PersistentVolume.model_validate({"metadata": {"name": name}, "spec": {
            "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
            "hostPath": {"path": f"/tmp/{name}"}, **spec}}))

    async def claim(self, name: str, storage_class: str, size: str = "1Gi") -> PersistentVolumeClaim:
        return await self.client.create(PersistentVolumeClaim.model_validate({
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": size}}}}))

    async def get_claim(self, name: str) -> PersistentVolumeClaim:
        return await self.client.get(PersistentVolumeClaim, name, self.namespace)

    async def bound_claim(self, name: str) -> PersistentVolumeClaim | None:
        claim = await self.get_claim(name)
        return claim if claim.status.phase == "Bound" else None

    async def gone(self, cls: type[PersistentVolume] | type[PersistentVolumeClaim], name: str) -> bool:
        try:
            await self.client.get(cls, name, self.namespace if cls is PersistentVolumeClaim else None)
        except NotFound:
            return True
        return False

    async def gone_pod(self, name: str) -> bool:
        try:
            await self.client.get(Pod, name, self.namespace)
        except NotFound:
            return True
        return False

    async def reasons(self, name: str) -> set[str]:
        events = await self.client.list(Event, self.namespace)
        return {str(e.reason) for e in events.items if e.involved_object.name == name}


@pytest_asyncio.fixture
async def storage(api: ApiServerHarness, manager: Process) -> AsyncIterator[Storage]:
    async with api.client("admin") as client:
        s = Storage(client)
        await client.create(Namespace.model_validate({"metadata": {"name": s.namespace}}))
        yield s


async def test_claim_binds_to_the_smallest_matching_volume(storage: Storage) -> None:
    cls, big, small, tiny = f"manual-{_id()}", f"big-{_id()}", f"small-{_id()}", f"tiny-{_id()}"
    await storage.volume(big, "10Gi", cls)
    await storage.volume(small, "2Gi", cls)
    await storage.volume(tiny, "500Mi", cls)
    await storage.claim("data", cls)
    claim = await eventually(lambda: storage.bound_claim("data"), timeout=20, message="the claim Bound")
    assert claim.spec.volume_name == small
    assert (claim.metadata.annotations or {}).get("pv.kubernetes.io/bind-completed") == "yes"
    assert claim.status.capacity == {"storage": "2Gi"} and claim.status.access_modes == ["ReadWriteOnce"]

    async def volume_bound() -> PersistentVolume | None:
        volume = await storage.client.get(PersistentVolume, small)
        return volume if volume.status.phase == "Bound" else None
    volume = await eventually(volume_bound, timeout=10, message="the volume Bound")
    assert volume.spec.claim_ref is not None and volume.spec.claim_ref.uid == claim.metadata.uid
    assert (volume.metadata.annotations or {}).get("pv.kubernetes.io/bound-by-controller") == "yes"
    for other in (big, tiny):
        assert (await storage.client.get(PersistentVolume, other)).status.phase == "Available"


async def test_claim_without_match_or_class_stays_pending(storage: Storage) -> None:
    await storage.claim("lonely", "")

    async def reported() -> bool:
        return "FailedBinding" in await storage.reasons("lonely")
    await eventually(reported, timeout=20, message="a FailedBinding event")
    assert (await storage.get_claim("lonely")).status.phase == "Pending"


async def test_retained_volume_is_released_when_its_claim_goes(storage: Storage) -> None:
    cls, name = f"keep-{_id()}", f"kept-{_id()}"
    await storage.volume(name, "1Gi", cls)
    await storage.claim("short-lived", cls)
    await eventually(lambda: storage.bound_claim("short-lived"), timeout=20, message="the claim Bound")
    await storage.client.delete(PersistentVolumeClaim, "short-lived", storage.namespace)

    async def released() -> bool:
        return (await storage.client.get(PersistentVolume, name)).status.phase == "Released"
    await eventually(released, timeout=20, message="the volume Released")


async def test_wait_for_first_consumer_claim_is_provisioned_on_the_selected_node(storage: Storage) -> None:
    cls, node = f"local-{_id()}", f"node-{_id()}"
    await storage.client.create(StorageClass.model_validate({
        "metadata": {"name": cls}, "provisioner": "picokube.io/local-path", "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer"}))
    await storage.client.create(Node.model_validate({"metadata": {
        "name": node, "labels": {"kubernetes.io/hostname": node},
        "annotations": {"picokube.io/local-volume-dir": f"/srv/{node}/volumes"}}}))
    claim = await storage.claim("late", cls)

    async def waiting() -> bool:
        return "WaitForFirstConsumer" in await storage.reasons("late")
    await eventually(waiting, timeout=20, message="a WaitForFirstConsumer event")
    assert (await storage.get_claim("late")).status.phase == "Pending"
    await storage.client.patch(PersistentVolumeClaim, "late", {"metadata": {"annotations": {
        "volume.kubernetes.io/selected-node": node}}}, storage.namespace)
    bound = await eventually(lambda: storage.bound_claim("late"), timeout=20, message="the claim provisioned")
    name = f"pvc-{claim.metadata.uid}"
    assert bound.spec.volume_name == name
    volume = await storage.client.get(PersistentVolume, name)
    assert volume.spec.host_path is not None and volume.spec.host_path.path == f"/srv/{node}/volumes/{name}"
    assert volume.spec.persistent_volume_reclaim_policy == "Delete" and volume.spec.storage_class_name == cls
    assert volume.spec.node_affinity is not None and volume.spec.node_affinity.to_dict() == {"required": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    assert (volume.metadata.annotations or {}).get("pv.kubernetes.io/provisioned-by") == "picokube.io/local-path"
    assert "ProvisioningSucceeded" in await storage.reasons("late")

    await storage.client.delete(PersistentVolumeClaim, "late", storage.namespace)
    await eventually(lambda: storage.gone(PersistentVolume, name), timeout=20,
                     message="the Delete policy removes the provisioned volume")


async def test_node_without_volume_dir_fails_provisioning(storage: Storage) -> None:
    cls, node = f"local-{_id()}", f"bare-{_id()}"
    await storage.client.create(StorageClass.model_validate({
        "metadata": {"name": cls}, "provisioner": "picokube.io/local-path",
        "volumeBindingMode": "WaitForFirstConsumer"}))
    await storage.client.create(Node.model_validate({"metadata": {"name": node}}))
    await storage.claim("nowhere", cls)
    await storage.client.patch(PersistentVolumeClaim, "nowhere", {"metadata": {"annotations": {
        "volume.kubernetes.io/selected-node": node}}}, storage.namespace)

    async def failed() -> bool:
        return "ProvisioningFailed" in await storage.reasons("nowhere")
    await eventually(failed, timeout=20, message="a ProvisioningFailed event")
    assert (await storage.get_claim("nowhere")).status.phase == "Pending"


async def test_claim_in_use_is_deleted_only_after_its_pod(storage: Storage) -> None:
    cls, name = f"prot-{_id()}", f"prot-{_id()}"
    await storage.volume(name, "1Gi", cls)
    await storage.claim("used", cls)
    await eventually(lambda: storage.bound_claim("used"), timeout=20, message="the claim Bound")
    await storage.client.create(Pod.model_validate({
        "metadata": {"name": "user", "namespace": storage.namespace},
        "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "used"}}]}}))
    await storage.client.delete(PersistentVolumeClaim, "used", storage.namespace)
    claim = await storage.get_claim("used")
    assert claim.metadata.deletion_timestamp is not None
    assert "kubernetes.io/pvc-protection" in (claim.metadata.finalizers or [])
    # The claim stays (Terminating) while the pod exists.
    with pytest.raises(AssertionError):
        await eventually(lambda: storage.gone(PersistentVolumeClaim, "used"), timeout=3)
    await storage.client.delete(Pod, "user", storage.namespace)
    await eventually(lambda: storage.gone(PersistentVolumeClaim, "used"), timeout=20,
                     message="the claim deleted once its pod is gone")

    async def released() -> bool:
        return (await storage.client.get(PersistentVolume, name)).status.phase == "Released"
    await eventually(released, timeout=20, message="its Retain volume Released")
    await storage.client.delete(PersistentVolume, name)
    await eventually(lambda: storage.gone(PersistentVolume, name), timeout=20,
                     message="a released volume's protection finalizer removed")


async def test_statefulset_creates_a_claim_per_template_and_ordinal(storage: Storage) -> None:
    template = {"metadata": {"name": "data", "labels": {"tier": "db"}}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}}
    for name, policy in (("web", None), ("tmp", {"whenDeleted": "Delete", "whenScaled": "Retain"})):
        spec: dict[str, Any] = {
            "replicas": 2, "podManagementPolicy": "Parallel", "serviceName": name,
            "selector": {"matchLabels": {"app": name}}, "volumeClaimTemplates": [template],
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}
        if policy:
            spec["persistentVolumeClaimRetentionPolicy"] = policy
        await storage.client.create_raw(StatefulSet.info, {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                                           "metadata": {"name": name, "namespace": storage.namespace},
                                                           "spec": spec}, storage.namespace)

    async def claims() -> dict[str, PersistentVolumeClaim] | None:
        found = {str(c.metadata.name): c for c in (await storage.client.list(PersistentVolumeClaim,
                                                                             storage.namespace)).items}
        wanted = {"data-web-0", "data-web-1", "data-tmp-0", "data-tmp-1"}
        return found if wanted <= set(found) else None
    found = await eventually(claims, timeout=30, message="a claim per template and ordinal")
    assert found["data-web-0"].metadata.labels == {"tier": "db", "app": "web"}
    assert found["data-web-0"].metadata.owner_references is None  # Retain: the claim outlives the set
    refs = found["data-tmp-1"].metadata.owner_references or []
    assert [(r.kind, r.name, r.controller) for r in refs] == [("StatefulSet", "tmp", None)]

    async def pod_volumes() -> list[Any] | None:
        try:
            pod = await storage.client.get(Pod, "web-1", storage.namespace)
        except NotFound:
            return None
        volumes: list[Any] = pod.to_dict()["spec"].get("volumes") or []
        return volumes
    volumes = await eventually(pod_volumes, timeout=30, message="the pod web-1")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}} in volumes


async def test_scale_down_hands_claims_to_their_pods_when_when_scaled_is_delete(storage: Storage) -> None:
    spec: dict[str, Any] = {
        "replicas": 2, "podManagementPolicy": "Parallel", "serviceName": "s",
        "selector": {"matchLabels": {"app": "s"}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}}],
        "template": {"metadata": {"labels": {"app": "s"}},
                     "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}
    await storage.client.create_raw(StatefulSet.info, {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                                       "metadata": {"name": "s", "namespace": storage.namespace},
                                                       "spec": spec}, storage.namespace)

    async def pod_exists(name: str) -> bool:
        return not await storage.gone_pod(name)
    await eventually(lambda: pod_exists("s-1"), timeout=30, message="two pods")
    await storage.client.patch(StatefulSet, "s", {"spec": {"replicas": 1}}, storage.namespace)
    await eventually(lambda: storage.gone(PersistentVolumeClaim, "data-s-1"), timeout=30,
                     message="the scaled-away pod's claim deleted with it")
    kept = await storage.get_claim("data-s-0")
    assert kept.metadata.owner_references is None and kept.metadata.deletion_timestamp is None


async def test_claim_naming_its_volume_binds_to_it_or_reports_the_mismatch(storage: Storage) -> None:
    cls, chosen, small = f"pre-{_id()}", f"chosen-{_id()}", f"small-{_id()}"
    await storage.volume(chosen, "5Gi", cls)
    await storage.volume(small, "100Mi", cls)
    for name, volume in (("wants-chosen", chosen), ("wants-small", small)):
        await storage.client.create(PersistentVolumeClaim.model_validate({
            "metadata": {"name": name, "namespace": storage.namespace},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": cls, "volumeName": volume,
                     "resources": {"requests": {"storage": "1Gi"}}}}))
    bound = await eventually(lambda: storage.bound_claim("wants-chosen"), timeout=20, message="the claim Bound")
    assert bound.spec.volume_name == chosen and bound.status.capacity == {"storage": "5Gi"}

    async def mismatch() -> bool:
        return "VolumeMismatch" in await storage.reasons("wants-small")
    await eventually(mismatch, timeout=20, message="a VolumeMismatch event")
    assert (await storage.get_claim("wants-small")).status.phase == "Pending"
