"""The files a simulated container can read: its sandbox's, and whatever its mounts show.

A simulated container has no filesystem of its own; what `cat` may read is the sandbox's
files (/etc/resolv.conf, /etc/hostname) and the files under each CRI mount, read from the
node's disk when asked, so an update the kubelet makes to a volume shows at once, as it
does through a real bind mount. The longest mount path wins, as in a mount table; symlinks
(the atomic writer's `..data` layout) are followed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from kubelet.cri.interface import Mount

__all__ = ["MountedFiles"]


class MountedFiles(Mapping[str, str]):
    """A read-only view: container path -> text."""

    def __init__(self, fixed: Mapping[str, str], mounts: Sequence[Mount]) -> None:
        self.fixed = dict(fixed)
        self.mounts = sorted(mounts, key=lambda m: len(m.container_path), reverse=True)

    def _host(self, path: str) -> Path | None:
        for m in self.mounts:
            root = m.container_path.rstrip("/") or "/"
            if path == root or path.startswith(root.rstrip("/") + "/"):
                rest = path[len(root):].lstrip("/")
                return Path(m.host_path) / rest if rest else Path(m.host_path)
        return None

    def list_dir(self, path: str) -> list[str] | None:
        """The names in a mounted directory (hidden `..` entries left out, as `ls` does), or None."""
        host = self._host(path.rstrip("/") or "/")
        if host is None or not host.is_dir():
            return None
        return sorted(p.name for p in host.iterdir() if not p.name.startswith("."))

    def __getitem__(self, path: str) -> str:
        if path in self.fixed:
            return self.fixed[path]
        host = self._host(path)
        if host is None or not host.is_file():
            raise KeyError(path)
        try:
            return host.read_text(errors="replace")
        except OSError as e:
            raise KeyError(path) from e

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        try:
            self[path]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        yield from self.fixed
        for m in self.mounts:
            host = Path(m.host_path)
            if host.is_file():
                yield m.container_path
            elif host.is_dir():
                for p in sorted(host.rglob("*")):
                    if p.is_file() and not any(part.startswith("..") for part in p.relative_to(host).parts):
                        yield f"{m.container_path.rstrip('/')}/{p.relative_to(host)}"

    def __len__(self) -> int:
        return sum(1 for _ in self)
