"""Writes a volume's files so a reader sees the old set or the new set, never a mix.

Mirrors pkg/volume/util/atomic_writer.go. The target directory holds:
- `..2006_01_02_15_04_05.<random>`: a timestamped directory with this version's files;
- `..data`: a symlink to the current timestamped directory, replaced by renaming a fresh
  `..data_tmp` link over it (rename is atomic, so readers switch versions in one step);
- one symlink per top-level entry of the payload (`key` -> `..data/key`), which is what a
  container sees through its mount; those links never change, only `..data` does.
`write` is idempotent: an unchanged payload (same paths, bytes and modes) touches nothing.
After a swap the previous timestamped directory and any top-level links the new payload
no longer has are removed. Paths are checked as upstream does (relative, no `..`
element, not starting with `..`); a bad one raises ValueError before anything is written.
Not safe to call concurrently for the same directory (the kubelet syncs a pod from one
worker at a time).
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DATA_DIR", "FileProjection", "write_payload", "validate_path"]

DATA_DIR = "..data"
_DATA_TMP = "..data_tmp"
_MAX_PATH = 4096


@dataclass(frozen=True)
class FileProjection:
    """One file of a payload: its bytes and permission bits."""

    data: bytes
    mode: int = 0o644


def validate_path(target: str) -> None:
    """Raise ValueError with upstream's message when `target` may not name a payload file."""
    if len(target) > _MAX_PATH:
        raise ValueError("invalid path: must be less than or equal to 4096 characters")
    if os.path.isabs(target):
        raise ValueError(f"invalid path: must be relative path: {target}")
    parts = target.split("/")
    if any(p == ".." for p in parts):
        raise ValueError(f"invalid path: must not contain '..': {target}")
    if parts[0].startswith("..") and len(parts[0]) > 2:
        raise ValueError(f"invalid path: must not start with '..': {target}")


def write_payload(target_dir: Path, payload: Mapping[str, FileProjection]) -> bool:
    """Make `target_dir` show exactly `payload`; True when anything changed."""
    for p in payload:
        validate_path(p)
    clean = {os.path.normpath(p): f for p, f in payload.items()}
    target_dir.mkdir(parents=True, exist_ok=True)
    data_link = target_dir / DATA_DIR
    old_ts = os.readlink(data_link) if data_link.is_symlink() else None
    if old_ts is not None and _matches(target_dir / old_ts, clean):
        return False
    new_ts = target_dir / time.strftime(f"..%Y_%m_%d_%H_%M_%S.{secrets.randbelow(10**9):09d}", time.gmtime())
    new_ts.mkdir(mode=0o755)
    for rel, projection in clean.items():
        path = new_ts / rel
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        path.write_bytes(projection.data)
        os.chmod(path, projection.mode)
    tmp_link = target_dir / _DATA_TMP
    if tmp_link.is_symlink() or tmp_link.exists():
        tmp_link.unlink()
    tmp_link.symlink_to(new_ts.name)
    os.rename(tmp_link, data_link)
    _link_user_visible(target_dir, {p.split("/", 1)[0] for p in clean})
    if old_ts is not None and old_ts != new_ts.name:
        shutil.rmtree(target_dir / old_ts, ignore_errors=True)
    return True


def _matches(ts_dir: Path, payload: Mapping[str, FileProjection]) -> bool:
    """The timestamped directory holds exactly the payload's files, bytes and modes."""
    if not ts_dir.is_dir():
        return False
    present = {str(p.relative_to(ts_dir)) for p in ts_dir.rglob("*") if p.is_file()}
    if present != set(payload):
        return False
    for rel, projection in payload.items():
        path = ts_dir / rel
        if path.read_bytes() != projection.data or (path.stat().st_mode & 0o7777) != projection.mode:
            return False
    return True


def _link_user_visible(target_dir: Path, top_level: set[str]) -> None:
    """Point one link per top-level name into `..data`; drop links to names no longer there."""
    for name in top_level:
        link = target_dir / name
        if not link.is_symlink():
            link.symlink_to(f"{DATA_DIR}/{name}")
    for entry in target_dir.iterdir():
        if not entry.name.startswith("..") and entry.name not in top_level and entry.is_symlink():
            entry.unlink()
