"""Who programs a network namespace's iptables when several proxies share it.

`picokube up` runs every node on the host's network namespace (each node has its own
containerd, bridge and pod subnet, but one set of tables), so one proxy per node would mean
several writers of the same KUBE-* chains, each flushing the others' rules and, on stopping,
removing rules the others still need. kube-proxy assumes one proxy per node network; picokube
keeps that assumption per network namespace instead: the proxies of one namespace elect a
holder with an exclusive `flock` on a file named by the namespace's inode. The holder
programs; the others keep the same model (Services and EndpointSlices are cluster-wide, so
every proxy computes the same rules) and stand by, trying the lock before each sync. The
kernel releases the lock when the holder exits however it exits, so a standby takes over
within one sync interval, and its first sync rewrites the chains in full. In docker compose
each node container has its own namespace, so each node's proxy holds its own lock.

Guarantees: at most one `NamespaceLock` per network namespace is held at a time, across
processes; `try_acquire` never blocks; the lock lives as long as the object (or `release`).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

__all__ = ["NamespaceLock", "netns_id"]

RUN_DIR = Path("/run/picokube")


def netns_id() -> int:
    """The inode of this process's network namespace: equal for processes that share it."""
    return os.stat("/proc/self/ns/net").st_ino


def _lock_dir() -> Path:
    for candidate in (RUN_DIR, Path(tempfile.gettempdir()) / "picokube"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            return candidate
        except OSError:
            continue
    raise OSError("no writable directory for the proxy's namespace lock")


class NamespaceLock:
    """The right to program this network namespace's iptables."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or _lock_dir()) / f"kube-proxy-netns-{netns_id()}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; True while this object holds it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None
