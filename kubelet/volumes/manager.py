"""A pod's volumes on the node: prepared before its containers start, refreshed, torn down.

Mirrors the kubelet's volume manager and the volume plugins' SetUp/TearDown, reduced to
plain directories under the kubelet's root (upstream's layout):
    <root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume>
- emptyDir: an empty 0777 directory; `medium: Memory` is a tmpfs (sized by `sizeLimit`)
  when the kubelet may mount (`use_tmpfs`: a real node running as root), else a directory;
- configMap, secret, downwardAPI, projected: files written by the atomic writer, so each
  `set_up` (every sync of the pod, including the periodic resync) brings them up to date
  in one symlink swap; secret and projected volumes live on a tmpfs under `use_tmpfs`, so
  secrets never reach the node's disk; all four are mounted read-only, as upstream;
- hostPath: the node's path, after the type check of `kubelet.volumes.host_path`;
- persistentVolumeClaim: the node path of the bound volume (`kubelet.volumes.claims`).
A volume that cannot be set up is reported in `SetUpResult.errors` (volume -> reason) and
left as it was (a file-backed one that was written before is still returned, so a container
restarted meanwhile mounts what it last held); the others are still set up. `container_mounts` turns a container's
volumeMounts into CRI mounts (subPath and subPathExpr resolved inside the volume).
`tear_down` unmounts any tmpfs and removes the pod's directory; it is idempotent.
One pod is set up by one worker at a time (the kubelet's queue guarantees it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kube.api import Container, Pod, Volume
from kube.quantity import to_int
from kubelet.cri.interface import Mount
from kubelet.envvars import ContainerConfigError
from kubelet.expansion import expand
from kubelet.pod_objects import ObjectGetter
from kubelet.volumes.atomic_writer import DATA_DIR, write_payload
from kubelet.volumes.claims import claim_host_path
from kubelet.volumes.host_path import check_host_path
from kubelet.volumes.payloads import (
    DEFAULT_MODE,
    Payload,
    PayloadContext,
    VolumeError,
    config_map_payload,
    downward_api_payload,
    projected_payload,
    secret_payload,
)

__all__ = ["MountedVolume", "SetUpResult", "VolumeManager"]

logger = logging.getLogger(__name__)

EMPTY_DIR, CONFIG_MAP, SECRET = "kubernetes.io~empty-dir", "kubernetes.io~configmap", "kubernetes.io~secret"
DOWNWARD_API, PROJECTED = "kubernetes.io~downward-api", "kubernetes.io~projected"


@dataclass(frozen=True)
class MountedVolume:
    path: Path
    read_only: bool = False


@dataclass
class SetUpResult:
    volumes: dict[str, MountedVolume] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


class VolumeManager:
    """Sets up and tears down the volumes of the pods of one node."""

    def __init__(self, root_dir: Path, *, use_tmpfs: bool = False, client: ObjectGetter | None = None) -> None:
        """`client` reads PersistentVolumeClaims and their volumes (claims fail to mount without one)."""
        self.root_dir = root_dir
        self.use_tmpfs = use_tmpfs
        self.client = client

    def pod_dir(self, uid: str) -> Path:
        return self.root_dir / "pods" / uid

    def pod_uids_on_disk(self) -> list[str]:
        """The uids that have a pod directory (to find the directories of pods that are gone)."""
        pods = self.root_dir / "pods"
        return sorted(p.name for p in pods.iterdir()) if pods.is_dir() else []

    async def set_up(self, pod: Pod, ctx: PayloadContext) -> SetUpResult:
        """Prepare every volume of the pod; never raises for one volume's failure."""
        result = SetUpResult()
        for volume in pod.spec.volumes or []:
            try:
                mounted = await self._set_up_one(pod, volume, ctx)
            except (VolumeError, ValueError, OSError) as e:
                result.errors[volume.name] = str(e)
                mounted = self._written_before(pod, volume)
                if mounted is not None:  # keep serving what it last held, as upstream does
                    result.volumes[volume.name] = mounted
                continue
            if mounted is not None:
                result.volumes[volume.name] = mounted
        return result

    async def _set_up_one(self, pod: Pod, volume: Volume, ctx: PayloadContext) -> MountedVolume | None:
        volumes = self.pod_dir(str(pod.metadata.uid)) / "volumes"
        if volume.host_path is not None:
            return MountedVolume(check_host_path(volume.host_path.path, volume.host_path.type))
        if volume.persistent_volume_claim is not None:
            claim = volume.persistent_volume_claim
            claimed = await claim_host_path(self.client, namespace=str(pod.metadata.namespace),
                                            claim=claim.claim_name)
            return MountedVolume(Path(claimed), read_only=bool(claim.read_only))
        if volume.empty_dir is not None:
            path = volumes / EMPTY_DIR / volume.name
            path.mkdir(parents=True, exist_ok=True)
            os.chmod(path, 0o777)
            if volume.empty_dir.medium == "Memory":
                await self._tmpfs(path, volume.empty_dir.size_limit)
            return MountedVolume(path)
        plugin, payload = await self._payload(pod, volume, ctx)
        if plugin is None or payload is None:
            return None  # a source kind this kubelet does not mount: no mount
        path = volumes / plugin / volume.name
        path.mkdir(parents=True, exist_ok=True)
        if plugin in (SECRET, PROJECTED):
            await self._tmpfs(path, None)
        if await asyncio.to_thread(write_payload, path, payload):
            logger.debug("Volume contents updated", extra={"pod": pod.key, "volume": volume.name})
        return MountedVolume(path, read_only=True)

    def _written_before(self, pod: Pod, volume: Volume) -> MountedVolume | None:
        """A file-backed volume that an earlier set-up wrote (its `..data` link exists), else None."""
        volumes = self.pod_dir(str(pod.metadata.uid)) / "volumes"
        plugin = CONFIG_MAP if volume.config_map is not None else SECRET if volume.secret is not None else \
            DOWNWARD_API if volume.downward_api is not None else PROJECTED if volume.projected is not None else None
        if plugin is None or not (volumes / plugin / volume.name / DATA_DIR).is_symlink():
            return None
        return MountedVolume(volumes / plugin / volume.name, read_only=True)

    async def _payload(self, pod: Pod, volume: Volume, ctx: PayloadContext) -> tuple[str | None, Payload | None]:
        if volume.config_map is not None:
            return CONFIG_MAP, await config_map_payload(pod, volume.config_map, ctx)
        if volume.secret is not None:
            return SECRET, await secret_payload(pod, volume.secret, ctx)
        if volume.downward_api is not None:
            source = volume.downward_api
            mode = source.default_mode if source.default_mode is not None else DEFAULT_MODE
            return DOWNWARD_API, downward_api_payload(pod, source.items, mode, ctx)
        if volume.projected is not None:
            return PROJECTED, await projected_payload(pod, volume.projected, ctx)
        return None, None

    async def _tmpfs(self, path: Path, size_limit: str | None) -> None:
        if not self.use_tmpfs or _is_mount(path):
            return
        options = "mode=0777" + (f",size={to_int(size_limit)}" if size_limit else "")
        await _run("mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path))

    def container_mounts(self, container: Container, volumes: Mapping[str, MountedVolume],
                         env: Mapping[str, str]) -> tuple[Mount, ...]:
        """The CRI mounts of the container's volumeMounts; ContainerConfigError for a bad subPath."""
        mounts: list[Mount] = []
        for vm in container.volume_mounts or []:
            volume = volumes.get(vm.name)
            if volume is None:
                continue  # a volume this kubelet does not mount
            host = volume.path
            sub = expand(vm.sub_path_expr, env) if vm.sub_path_expr else vm.sub_path
            if sub:
                host = _sub_path(volume.path, sub, vm.name, container.name)
            mounts.append(Mount(container_path=vm.mount_path, host_path=str(host),
                                readonly=bool(vm.read_only) or volume.read_only))
        return tuple(mounts)

    async def tear_down(self, uid: str) -> None:
        """Unmount the pod's tmpfs volumes and remove its directory; idempotent."""
        pod_dir = self.pod_dir(uid)
        for point in _mount_points(pod_dir / "volumes"):
            await _run("umount", str(point))
        await asyncio.to_thread(shutil.rmtree, pod_dir, ignore_errors=True)


def _is_mount(path: Path) -> bool:
    return os.path.ismount(path)


def _mount_points(volumes: Path) -> list[Path]:
    """The volume directories that are mount points (tmpfs volumes)."""
    if not volumes.is_dir():
        return []
    return [path for plugin in volumes.iterdir() if plugin.is_dir() for path in plugin.iterdir() if _is_mount(path)]


def _sub_path(volume: Path, sub: str, volume_name: str, container: str) -> Path:
    """The subPath inside the volume (created as a directory when missing), never outside it."""
    failed = f'failed to prepare subPath for volumeMount "{volume_name}" of container "{container}"'
    if os.path.isabs(sub) or ".." in sub.split("/"):
        raise ContainerConfigError(failed)
    target = volume / sub
    if not target.exists() and not target.is_symlink():
        target.mkdir(mode=0o755, parents=True)
    real, root = os.path.realpath(target), os.path.realpath(volume)
    if real != root and not real.startswith(root + os.sep):
        raise ContainerConfigError(failed)
    return Path(real)


async def _run(*argv: str) -> None:
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.STDOUT)
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise OSError(f"{' '.join(argv)}: {out.decode(errors='replace').strip()}")
