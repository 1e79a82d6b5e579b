"""PersistentVolumes, PersistentVolumeClaims and StorageClasses through the API.

Defaults, validation with upstream's messages, the immutable claim spec, the DefaultStorageClass
and StorageObjectInUseProtection admission, and the table columns kubectl prints.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from apiserver.endpoints.tables import to_table
from tests.apiserver.conftest import causes

PVS = "/api/v1/persistentvolumes"
SCS = "/apis/storage.k8s.io/v1/storageclasses"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def pv(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": f"/tmp/{name}"}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": body}


def pvc(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": body}


def sc(name: str, *, default: bool = False, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "example.com/disk", **fields}


def test_volume_defaults_and_protection_finalizer(c: httpx.Client) -> None:
    name = _name("pv")
    resp = c.post(PVS, json=pv(name))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert body["spec"]["volumeMode"] == "Filesystem"
    assert body["status"] == {"phase": "Pending"}
    assert body["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]


def test_claim_defaults_and_protection_finalizer(c: httpx.Client, ns: str) -> None:
    resp = c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=pvc("data", storageClassName=""))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["spec"]["volumeMode"] == "Filesystem" and body["spec"]["storageClassName"] == ""
    assert body["status"] == {"phase": "Pending"}
    assert body["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]


def test_volume_validation_names_every_field(c: httpx.Client) -> None:
    bad = pv(_name("bad"), accessModes=[], capacity={"storage": "1Gi", "cpu": "1"},
             persistentVolumeReclaimPolicy="Keep", volumeMode="Raw", storageClassName="No_Class")
    del bad["spec"]["hostPath"]
    found = causes(c.post(PVS, json=bad))
    assert found["spec.accessModes"] == "Required value: at least 1 access mode is required"
    assert found["spec.capacity"].startswith("Unsupported value: ")
    assert found["spec.capacity"].endswith('supported values: "storage"')
    assert found["spec.persistentVolumeReclaimPolicy"] == (
        'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"')
    assert found["spec.volumeMode"] == 'Unsupported value: "Raw": supported values: "Block", "Filesystem"'
    assert found["spec.storageClassName"].startswith('Invalid value: "No_Class": a lowercase RFC 1123 subdomain')
    assert found["spec"] == "Required value: must specify a volume type"
    local = pv(_name("local"), local={"path": "/mnt/x"})
    del local["spec"]["hostPath"]
    assert causes(c.post(PVS, json=local))["spec.nodeAffinity"] == (
        "Required value: Local volume requires node affinity")


def test_volume_source_is_immutable(c: httpx.Client) -> None:
    name = _name("pv")
    assert c.post(PVS, json=pv(name)).status_code == 201
    stored = c.get(f"{PVS}/{name}").json()
    stored["spec"]["hostPath"]["path"] = "/elsewhere"
    found = causes(c.put(f"{PVS}/{name}", json=stored))
    assert found["spec.persistentvolumesource"] == (
        "Forbidden: spec.persistentvolumesource is forbidden once it was created")


def test_claim_validation(c: httpx.Client, ns: str) -> None:
    bad = pvc("bad", accessModes=["ReadWriteSometimes"], resources={"requests": {}})
    found = causes(c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", json=bad))
    assert found["spec.accessModes"] == ('Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", '
                                         '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"')
    assert found["spec.resources[storage]"] == "Required value"
    zero = causes(c.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
                         json=pvc("zero", resources={"requests": {"storage": "0"}})))
    assert zero["spec.resources.requests[storage]"] == 'Invalid value: "0": must be greater than zero'


def test_claim_spec_is_immutable_except_binding_and_growth(c: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    assert c.post(base, json=pvc("frozen", storageClassName="")).status_code == 201
    claim = c.get(f"{base}/frozen").json()
    claim["spec"]["accessModes"] = ["ReadWriteMany"]
    assert causes(c.put(f"{base}/frozen", json=claim))["spec"] == (
        "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for "
        "bound claims")
    bind = c.patch(f"{base}/frozen", json={"spec": {"volumeName": "pv-x"}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert bind.status_code == 200, bind.text
    status = c.patch(f"{base}/frozen/status", json={"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert status.status_code == 200, status.text
    grow = c.patch(f"{base}/frozen", json={"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert grow.status_code == 200, grow.text
    shrink = c.patch(f"{base}/frozen", json={"spec": {"resources": {"requests": {"storage": "1Gi"}}}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert causes(shrink)["spec.resources.requests.storage"] == "Forbidden: field can not be less than previous value"


def test_storage_class_defaults_validation_and_immutability(c: httpx.Client) -> None:
    name = _name("sc")
    resp = c.post(SCS, json=sc(name, parameters={"type": "ssd"}))
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert (body["reclaimPolicy"], body["volumeBindingMode"]) == ("Delete", "Immediate")
    body["parameters"] = {"type": "hdd"}
    body["provisioner"] = "example.com/other"
    found = causes(c.put(f"{SCS}/{name}", json=body))
    assert found["parameters"] == "Forbidden: updates to parameters are forbidden."
    assert found["provisioner"] == "Forbidden: updates to provisioner are forbidden."
    bad = sc(_name("bad"), reclaimPolicy="Recycle", volumeBindingMode="Later")
    del bad["provisioner"]
    found = causes(c.post(SCS, json=bad))
    assert found["provisioner"] == "Required value"
    assert found["reclaimPolicy"] == 'Unsupported value: "Recycle": supported values: "Delete", "Retain"'
    assert found["volumeBindingMode"] == (
        'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"')


def test_default_storage_class_fills_unset_class_only(c: httpx.Client, ns: str) -> None:
    name = _name("default")
    assert c.post(SCS, json=sc(name, default=True)).status_code == 201
    try:
        base = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
        unset = c.post(base, json=pvc("unset")).json()
        assert unset["spec"]["storageClassName"] == name
        empty = c.post(base, json=pvc("empty", storageClassName="")).json()
        assert empty["spec"]["storageClassName"] == ""
        named = c.post(base, json=pvc("named", storageClassName="fast")).json()
        assert named["spec"]["storageClassName"] == "fast"
    finally:
        c.delete(f"{SCS}/{name}")


def test_short_names_and_discovery(c: httpx.Client) -> None:
    core = {r["name"]: r for r in c.get("/api/v1").json()["resources"]}
    assert core["persistentvolumes"]["shortNames"] == ["pv"] and not core["persistentvolumes"]["namespaced"]
    assert core["persistentvolumeclaims"]["shortNames"] == ["pvc"] and core["persistentvolumeclaims"]["namespaced"]
    assert "persistentvolumeclaims/status" in core
    storage = {r["name"]: r for r in c.get("/apis/storage.k8s.io/v1").json()["resources"]}
    assert storage["storageclasses"]["shortNames"] == ["sc"]


NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
CREATED = "2024-05-01T11:55:00Z"


def test_volume_table() -> None:
    volume = pv("pv-1", accessModes=["ReadWriteMany", "ReadWriteOnce"], storageClassName="standard",
                persistentVolumeReclaimPolicy="Delete", volumeMode="Filesystem",
                claimRef={"namespace": "default", "name": "data"})
    volume["metadata"]["creationTimestamp"] = CREATED
    volume["status"] = {"phase": "Bound"}
    table = to_table("PersistentVolume", [volume], now=NOW)
    assert [col["name"] for col in table["columnDefinitions"]] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    assert table["rows"][0]["cells"] == ["pv-1", "1Gi", "RWO,RWX", "Delete", "Bound", "default/data", "standard",
                                         "<unset>", "", "5m", "Filesystem"]
    volume["metadata"]["deletionTimestamp"] = CREATED
    assert to_table("PersistentVolume", [volume], now=NOW)["rows"][0]["cells"][4] == "Terminating"


def test_claim_table() -> None:
    claim = pvc("data", storageClassName="standard", volumeMode="Filesystem")
    claim["metadata"]["creationTimestamp"] = CREATED
    claim["status"] = {"phase": "Pending"}
    table = to_table("PersistentVolumeClaim", [claim], now=NOW)
    assert [col["name"] for col in table["columnDefinitions"]] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
        "VolumeMode"]
    assert table["rows"][0]["cells"] == ["data", "Pending", "", "", "", "standard", "<unset>", "5m", "Filesystem"]
    claim["spec"]["volumeName"] = "pvc-1"
    claim["status"] = {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteOnce"]}
    assert to_table("PersistentVolumeClaim", [claim], now=NOW)["rows"][0]["cells"][:5] == [
        "data", "Bound", "pvc-1", "2Gi", "RWO"]


def test_storage_class_table_marks_the_default() -> None:
    cls = sc("standard", default=True, reclaimPolicy="Delete", volumeBindingMode="WaitForFirstConsumer")
    cls["metadata"]["creationTimestamp"] = CREATED
    table = to_table("StorageClass", [cls], now=NOW)
    assert [col["name"] for col in table["columnDefinitions"]] == [
        "Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]
    assert table["rows"][0]["cells"] == ["standard (default)", "example.com/disk", "Delete", "WaitForFirstConsumer",
                                         False, "5m"]


def test_claim_metadata_may_change(c: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    assert c.post(base, json=pvc("annotated", storageClassName="x")).status_code == 201
    resp = c.patch(f"{base}/annotated", json={"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n"}}},
                   headers={"Content-Type": "application/merge-patch+json"})
    assert resp.status_code == 200, resp.text
