"""Node-path volumes: hostPath type checks with upstream's messages, and the node directory of
a bound PersistentVolumeClaim (refused while unbound, missing or terminating)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from kube.errors import NotFound
from kubelet.volumes.claims import claim_host_path
from kubelet.volumes.host_path import check_host_path
from kubelet.volumes.payloads import VolumeError


def test_host_path_or_create_kinds_make_what_is_missing(tmp_path: Path) -> None:
    made = check_host_path(str(tmp_path / "a" / "dir"), "DirectoryOrCreate")
    assert made.is_dir() and made.stat().st_mode & 0o777 == 0o755
    touched = check_host_path(str(tmp_path / "b" / "file"), "FileOrCreate")
    assert touched.is_file() and touched.read_bytes() == b""
    assert check_host_path(str(tmp_path / "absent"), None) == tmp_path / "absent"  # no type: no check


def test_host_path_kinds_must_match(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    try:
        assert check_host_path(str(tmp_path / "s"), "Socket") == tmp_path / "s"
    finally:
        sock.close()
    for path, kind, noun in [(tmp_path / "f", "Directory", "a directory"), (tmp_path, "File", "a file"),
                             (tmp_path / "f", "Socket", "a socket file"), (tmp_path / "nope", "File", "a file"),
                             (tmp_path / "f", "DirectoryOrCreate", "a directory")]:
        with pytest.raises(ValueError) as caught:
            check_host_path(str(path), kind)
        assert str(caught.value) == f"hostPath type check failed: {path} is not {noun}"


class ClaimAPI:
    def __init__(self, objects: dict[str, dict[str, Any]]) -> None:
        self.objects = objects

    async def request(self, method: str, path: str, *, body: Any = None) -> Any:
        if path not in self.objects:
            raise NotFound(f'"{path.rsplit("/", 1)[-1]}" not found')
        return self.objects[path]


def _claim(phase: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "data", **meta}, "spec": {"volumeName": "pv-1"}, "status": {"phase": phase}}


async def test_bound_claim_gives_its_volumes_directory(tmp_path: Path) -> None:
    target = tmp_path / "volumes" / "pvc-1"
    api = ClaimAPI({"/api/v1/namespaces/ns/persistentvolumeclaims/data": _claim("Bound"),
                    "/api/v1/persistentvolumes/pv-1": {"spec": {"hostPath": {"path": str(target),
                                                                             "type": "DirectoryOrCreate"}}}})
    assert await claim_host_path(api, namespace="ns", claim="data") == str(target)
    assert target.is_dir() and target.stat().st_mode & 0o777 == 0o777


@pytest.mark.parametrize(("claim", "message"), [
    (None, "error processing PVC ns/data: failed to fetch PVC from API server: "),
    (_claim("Pending"), "error processing PVC ns/data: PVC is not bound"),
    (_claim("Bound", deletionTimestamp="2026-01-01T00:00:00Z"), "error processing PVC ns/data: PVC is being deleted"),
])
async def test_unusable_claims_fail_the_volume(claim: dict[str, Any] | None, message: str) -> None:
    objects = {"/api/v1/namespaces/ns/persistentvolumeclaims/data": claim} if claim else {}
    with pytest.raises(VolumeError) as caught:
        await claim_host_path(ClaimAPI(objects), namespace="ns", claim="data")
    assert str(caught.value).startswith(message)
