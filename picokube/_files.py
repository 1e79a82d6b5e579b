"""Atomic file writes for the data dir.

Readers (`status`, `down`, a restarted component reading its kubeconfig) must never see a
half-written file, and secrets must never exist with a permissive mode even briefly. So
every write goes to a temporary sibling created with the final mode and is then renamed
over the target (rename is atomic within one file system). Directories that hold secrets
are 0700, whatever the umask or an earlier run left.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["make_private_dir", "write_file_atomic"]


def write_file_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace `path` with `data`; the file has `mode` from the moment it exists."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)  # the umask may have narrowed or the file may have existed
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def make_private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) and leave it mode 0700; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)  # mkdir leaves an existing directory's mode as it was
    return path
