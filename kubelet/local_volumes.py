"""The node's side of local-path volumes: publish where they live, create them, clean them up.

PersistentVolumes of the `picokube.io/local-path` provisioner are directories on one node,
`<local volume dir>/pvc-<claim uid>`. The provisioner (in the controller-manager) cannot touch
the node's disk, so the kubelet does:
- `LocalVolumeManager.run()` publishes the directory as the Node annotation
  `picokube.io/local-volume-dir` (the provisioner reads it to build the volume's hostPath),
  then every `period` seconds removes each `pvc-*` directory whose PersistentVolume no longer
  exists (a Delete reclaim deleted it). Directories are listed before the volumes, so a
  directory created for a volume is never mistaken for an orphan: its volume existed first.
  Only directories directly under the local volume dir are ever removed;
- what a pod's PersistentVolumeClaim volume mounts (the bound volume's node path) is
  `kubelet.volumes.claims`.
A Retain volume keeps its directory (and data) as long as the volume object exists.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from pathlib import Path

from kube.api import Node, PersistentVolume
from kube.client import RESTClient
from kube.errors import ApiError, NotFound
from kube.volumeutil import LOCAL_VOLUME_DIR_ANNOTATION

__all__ = ["LOCAL_VOLUME_DIR_ANNOTATION", "LocalVolumeManager"]

logger = logging.getLogger(__name__)

_PREFIX = "pvc-"


class LocalVolumeManager:
    """Publishes this node's local volume dir and removes directories of deleted volumes."""

    def __init__(self, client: RESTClient, *, node_name: str, volume_dir: str, period: float = 10.0) -> None:
        self.client = client
        self.node_name = node_name
        self.volume_dir = Path(volume_dir)
        self.period = period

    async def run(self) -> None:
        """Publish, then sweep every `period` seconds until cancelled; a failed round is logged and retried."""
        await asyncio.to_thread(self.volume_dir.mkdir, parents=True, exist_ok=True)
        published = False
        while True:
            if not published:
                published = await self._publish()
                if not published:
                    await asyncio.sleep(1.0)  # the Node is registered moments after start
                    continue
            try:
                await self.sweep()
            except (ApiError, OSError) as e:
                logger.warning("Cleaning up local volumes failed, will retry", extra={"error": repr(e)})
            await asyncio.sleep(self.period)

    async def _publish(self) -> bool:
        try:
            await self.client.patch(Node, self.node_name, {"metadata": {"annotations": {
                LOCAL_VOLUME_DIR_ANNOTATION: str(self.volume_dir)}}})
        except NotFound:
            return False
        return True

    async def sweep(self) -> list[str]:
        """Remove the directories whose volume is gone; the names removed."""
        present = await asyncio.to_thread(self._volume_dirs)
        if not present:
            return []
        volumes = {v.metadata.name for v in (await self.client.list(PersistentVolume)).items}
        removed = [name for name in present if name not in volumes]
        for name in removed:
            logger.info("Removing the directory of a deleted volume", extra={"volume": name,
                                                                            "node": self.node_name})
            await asyncio.to_thread(shutil.rmtree, self.volume_dir / name, True)
        return removed

    def _volume_dirs(self) -> list[str]:
        try:
            return sorted(e.name for e in os.scandir(self.volume_dir)
                          if e.name.startswith(_PREFIX) and e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            return []
