"""VolumeBinding's PreFilter and Filter, table-driven over caches filled by hand."""

from __future__ import annotations

from typing import Any

import pytest

from kube.api import Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from kube.cache import Store
from scheduler.cache import NodeInfo
from scheduler.framework import CycleState
from scheduler.framework.interfaces import Code
from scheduler.plugins.volume_binding import (
    ERR_BIND_CONFLICT,
    ERR_NODE_CONFLICT,
    ERR_UNBOUND_IMMEDIATE,
    VolumeBinding,
)
from scheduler.volume_binder import VolumeLister
from tests.scheduler.builders import make_node, make_pod

NS = "default"


def claim(name: str, storage_class: str, volume: str | None = None) -> PersistentVolumeClaim:
    return PersistentVolumeClaim.model_validate({
        "metadata": {"name": name, "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class, "volumeName": volume,
                 "resources": {"requests": {"storage": "1Gi"}}}})


def volume(name: str, node: str | None, storage_class: str = "static") -> PersistentVolume:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "storageClassName": storage_class, "hostPath": {"path": f"/v/{name}"}}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return PersistentVolume.model_validate({"metadata": {"name": name}, "spec": spec})


def storage_class(name: str, provisioner: str, mode: str) -> StorageClass:
    return StorageClass.model_validate({"metadata": {"name": name}, "provisioner": provisioner,
                                        "volumeBindingMode": mode})


def lister() -> VolumeLister:
    claims: Store[PersistentVolumeClaim] = Store()
    volumes: Store[PersistentVolume] = Store()
    classes: Store[StorageClass] = Store()
    for c in (claim("bound", "static", "pv-a"), claim("immediate", "fast"), claim("late", "local"),
              claim("static-late", "manual")):
        claims.upsert(c)
    for v in (volume("pv-a", "a"), volume("pv-manual-b", "b", "manual")):
        volumes.upsert(v)
    for sc in (storage_class("fast", "example.com/disk", "Immediate"),
               storage_class("local", "picokube.io/local-path", "WaitForFirstConsumer"),
               storage_class("manual", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")):
        classes.upsert(sc)
    return VolumeLister(claims, volumes, classes)


def pod_with(*claims: str) -> Pod:
    pod = make_pod().name("p").obj()
    pod.metadata.namespace = NS
    body = pod.to_dict()
    body["spec"]["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                               for i, c in enumerate(claims)]
    return Pod.model_validate(body)


def node(name: str, *, volume_dir: bool = True) -> NodeInfo:
    built: Node = make_node().name(name).label("kubernetes.io/hostname", name).obj()
    if volume_dir:
        built.metadata.annotations = {"picokube.io/local-volume-dir": f"/srv/{name}"}
    info = NodeInfo()
    info.set_node(built)
    return info


@pytest.mark.parametrize(("claims", "reason"), [
    (("missing",), 'persistentvolumeclaim "missing" not found'),
    (("immediate",), ERR_UNBOUND_IMMEDIATE),
    (("late", "immediate"), ERR_UNBOUND_IMMEDIATE),
])
def test_pre_filter_rejects_everywhere(claims: tuple[str, ...], reason: str) -> None:
    status = VolumeBinding(lister()).pre_filter(CycleState(), pod_with(*claims), [node("a")])
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (reason,)


def test_pod_without_claims_is_skipped() -> None:
    status = VolumeBinding(lister()).pre_filter(CycleState(), pod_with(), [node("a")])
    assert status is not None and status.code is Code.SKIP


@pytest.mark.parametrize(("claims", "target", "volume_dir", "reason"), [
    (("bound",), "a", True, None),
    (("bound",), "b", True, ERR_NODE_CONFLICT),
    (("late",), "b", True, None),
    (("late",), "b", False, ERR_BIND_CONFLICT),
    (("static-late",), "b", True, None),
    (("static-late",), "a", True, ERR_BIND_CONFLICT),
    (("bound", "late"), "a", True, None),
])
def test_filter(claims: tuple[str, ...], target: str, volume_dir: bool, reason: str | None) -> None:
    plugin, state, pod = VolumeBinding(lister()), CycleState(), pod_with(*claims)
    assert plugin.pre_filter(state, pod, [node(target)]) is None
    status = plugin.filter(state, pod, node(target, volume_dir=volume_dir))
    assert (status.reasons[0] if status is not None else None) == reason
