"""Periodic etcd compaction, as kube-apiserver does it.

Every `interval` seconds the revision seen one interval ago is compacted, so history is kept
for at least one interval (watchers resuming within it are served) and etcd's space stays
bounded. Compaction errors are logged and retried next round; several API servers
compacting the same revision is harmless.
"""

from __future__ import annotations

import asyncio
import logging

from apiserver.storage import errors as serr
from apiserver.storage.interface import Storage

__all__ = ["compact_periodically"]

logger = logging.getLogger(__name__)


async def compact_periodically(storage: Storage, interval: float) -> None:
    previous = 0
    while True:
        await asyncio.sleep(interval)
        try:
            current = await storage.current_revision()
            if previous:
                await storage.compact(previous)
                logger.info("Compacted etcd", extra={"revision": previous})
            previous = current
        except (serr.StorageError, OSError) as e:
            logger.warning("Compaction failed, will retry", extra={"error": repr(e)})
