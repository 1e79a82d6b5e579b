"""hostPath volumes: a node path, checked against the volume's `type` before it is mounted.

Mirrors pkg/volume/hostpath's type checker: `DirectoryOrCreate` and `FileOrCreate` make
what is missing (a 0755 directory, an empty 0644 file with its parent directories);
`Directory`, `File`, `Socket`, `CharDevice` and `BlockDevice` require the path to be one;
an empty type checks nothing. Failures raise ValueError with upstream's message
(`hostPath type check failed: /x is not a directory`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["check_host_path"]

_KINDS = {
    "Directory": (stat.S_ISDIR, "a directory"),
    "File": (stat.S_ISREG, "a file"),
    "Socket": (stat.S_ISSOCK, "a socket file"),
    "CharDevice": (stat.S_ISCHR, "a character device"),
    "BlockDevice": (stat.S_ISBLK, "a block device"),
}


def check_host_path(path: str, kind: str | None) -> Path:
    """The path, created when its type asks for it; ValueError when it is not of that type."""
    target = Path(path)
    if kind == "DirectoryOrCreate":
        if not target.exists():
            target.mkdir(mode=0o755, parents=True)
        kind = "Directory"
    elif kind == "FileOrCreate":
        if not target.exists():
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            target.touch(mode=0o644)
        kind = "File"
    if not kind or kind not in _KINDS:
        return target
    test, noun = _KINDS[kind]
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = 0
    if not test(mode):
        raise ValueError(f"hostPath type check failed: {path} is not {noun}")
    return target
