"""The volume manager on its own: files, modes and optional sources of configMap, secret and
downwardAPI volumes; a source that disappears keeps its last contents mounted; subPaths
stay inside their volume; tear-down removes the pod's directory."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from kube.api import Pod
from kube.errors import NotFound
from kubelet.envvars import ContainerConfigError
from kubelet.pod_objects import PodObjects
from kubelet.volumes import PayloadContext, VolumeManager


class FakeAPI:
    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects

    async def request(self, method: str, path: str, *, body: Any = None) -> Any:
        key = "/".join(path.rsplit("/", 2)[-2:])
        if key not in self.objects:
            raise NotFound(f'"{key}" not found')
        return self.objects[key]


def _pod(volumes: list[dict[str, Any]], mounts: list[dict[str, Any]] | None = None) -> Pod:
    meta = {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"b": "2", "a": "1"}}
    return Pod.model_validate({"metadata": meta,
                               "spec": {"containers": [{"name": "main", "volumeMounts": mounts or [],
                                                        "resources": {"limits": {"memory": "64Mi"}}}],
                                        "volumes": volumes}})


def _ctx(api: FakeAPI) -> PayloadContext:
    return PayloadContext(PodObjects(api), pod_ip="10.0.0.9", host_ip="192.168.0.1", allocatable={"cpu": "2"})


API_OBJECTS: dict[str, dict[str, Any]] = {
    "configmaps/app": {"data": {"mode": "fast", "other": "x"},
                       "binaryData": {"blob": base64.b64encode(b"\0\1").decode()}},
    "secrets/creds": {"data": {"password": base64.b64encode(b"s3cret").decode()}},
}


async def test_files_modes_and_optional_sources(tmp_path: Path) -> None:
    manager = VolumeManager(tmp_path)
    pod = _pod([
        {"name": "all", "configMap": {"name": "app"}},
        {"name": "some", "configMap": {"name": "app", "defaultMode": 0o600,
                                       "items": [{"key": "mode", "path": "conf/mode", "mode": 0o400}]}},
        {"name": "creds", "secret": {"secretName": "creds"}},
        {"name": "absent", "secret": {"secretName": "nope", "optional": True}},
        {"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "mem", "resourceFieldRef": {"containerName": "main", "resource": "limits.memory",
                                                 "divisor": "1Mi"}}]}}])
    result = await manager.set_up(pod, _ctx(FakeAPI(API_OBJECTS)))
    assert result.errors == {}
    paths = {name: v.path for name, v in result.volumes.items()}
    assert sorted(p.name for p in paths["all"].iterdir() if not p.name.startswith("..")) == ["blob", "mode", "other"]
    assert (paths["all"] / "blob").read_bytes() == b"\0\1"
    assert (paths["some"] / "conf" / "mode").read_text() == "fast"
    assert (paths["some"] / "conf" / "mode").stat().st_mode & 0o777 == 0o400
    assert (paths["creds"] / "password").read_text() == "s3cret"
    assert (paths["creds"] / "password").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in paths["absent"].iterdir() if not p.name.startswith("..")] == []
    assert (paths["info"] / "labels").read_text() == 'a="1"\nb="2"' and (paths["info"] / "mem").read_text() == "64"
    assert all(v.read_only for v in result.volumes.values())
    assert paths["creds"] == tmp_path / "pods" / "u1" / "volumes" / "kubernetes.io~secret" / "creds"


async def test_missing_key_fails_and_a_vanished_source_keeps_its_last_contents(tmp_path: Path) -> None:
    manager = VolumeManager(tmp_path)
    objects = dict(API_OBJECTS)
    pod = _pod([{"name": "cfg", "configMap": {"name": "app"}},
                {"name": "keyed", "configMap": {"name": "app", "items": [{"key": "missing", "path": "m"}]}}])
    first = await manager.set_up(pod, _ctx(FakeAPI(objects)))
    assert first.errors == {"keyed": "configmap references non-existent config key: missing"}
    del objects["configmaps/app"]
    again = await manager.set_up(pod, _ctx(FakeAPI(objects)))
    assert again.errors["cfg"] == 'configmap "app" not found'
    assert (again.volumes["cfg"].path / "mode").read_text() == "fast"
    assert "keyed" not in again.volumes  # never written: nothing to serve


async def test_sub_paths_stay_inside_the_volume_and_tear_down_removes_everything(tmp_path: Path) -> None:
    manager = VolumeManager(tmp_path)
    pod = _pod([{"name": "scratch", "emptyDir": {}}],
               [{"name": "scratch", "mountPath": "/logs", "subPath": "logs"},
                {"name": "scratch", "mountPath": "/mine", "subPathExpr": "$(POD_NAME)"}])
    result = await manager.set_up(pod, _ctx(FakeAPI({})))
    scratch = result.volumes["scratch"].path
    mounts = manager.container_mounts(pod.spec.containers[0], result.volumes, {"POD_NAME": "p"})
    assert [(m.container_path, m.host_path) for m in mounts] == [("/logs", str(scratch / "logs")),
                                                                  ("/mine", str(scratch / "p"))]
    assert (scratch / "logs").is_dir()
    (scratch / "escape").symlink_to("/etc")
    for sub in ("../x", "/abs", "escape"):
        bad = _pod([{"name": "scratch", "emptyDir": {}}], [{"name": "scratch", "mountPath": "/x", "subPath": sub}])
        with pytest.raises(ContainerConfigError, match='failed to prepare subPath for volumeMount "scratch"'):
            manager.container_mounts(bad.spec.containers[0], result.volumes, {})
    await manager.tear_down("u1")
    assert not (tmp_path / "pods" / "u1").exists()
    await manager.tear_down("u1")  # idempotent
