"""The atomic writer's layout and guarantees: timestamped directory, `..data` swapped in one
rename, stable per-key links, no-op when nothing changed, old versions and keys removed,
modes applied, and upstream's path checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubelet.volumes.atomic_writer import DATA_DIR, FileProjection, validate_path, write_payload


def _ts_dirs(target: Path) -> list[str]:
    return sorted(p.name for p in target.iterdir() if p.name.startswith("..2") and p.is_dir())


def test_layout_is_timestamped_dir_data_link_and_per_key_links(tmp_path: Path) -> None:
    assert write_payload(tmp_path, {"a": FileProjection(b"1"), "dir/b": FileProjection(b"2", 0o400)})
    [ts] = _ts_dirs(tmp_path)
    assert os.readlink(tmp_path / DATA_DIR) == ts
    assert os.readlink(tmp_path / "a") == f"{DATA_DIR}/a"
    assert os.readlink(tmp_path / "dir") == f"{DATA_DIR}/dir"
    assert (tmp_path / "a").read_bytes() == b"1" and (tmp_path / "dir" / "b").read_bytes() == b"2"
    assert (tmp_path / ts / "dir" / "b").stat().st_mode & 0o777 == 0o400
    assert (tmp_path / ts / "a").stat().st_mode & 0o777 == 0o644


def test_unchanged_payload_touches_nothing(tmp_path: Path) -> None:
    payload = {"a": FileProjection(b"1")}
    assert write_payload(tmp_path, payload)
    before = _ts_dirs(tmp_path)
    assert not write_payload(tmp_path, payload)
    assert _ts_dirs(tmp_path) == before


def test_update_swaps_data_and_removes_old_version_and_dropped_keys(tmp_path: Path) -> None:
    write_payload(tmp_path, {"a": FileProjection(b"1"), "gone": FileProjection(b"x")})
    [old] = _ts_dirs(tmp_path)
    reader = open(tmp_path / "a", "rb")  # noqa: SIM115 - held open across the swap on purpose
    assert write_payload(tmp_path, {"a": FileProjection(b"2"), "new": FileProjection(b"n")})
    [new] = _ts_dirs(tmp_path)
    assert new != old and os.readlink(tmp_path / DATA_DIR) == new
    assert (tmp_path / "a").read_bytes() == b"2" and (tmp_path / "new").read_bytes() == b"n"
    assert not (tmp_path / "gone").is_symlink() and not (tmp_path / "gone").exists()
    assert reader.read() == b"1"  # an open file keeps its version: never a mix
    reader.close()
    assert not (tmp_path / "..data_tmp").exists()


def test_mode_change_alone_is_an_update(tmp_path: Path) -> None:
    write_payload(tmp_path, {"a": FileProjection(b"1", 0o644)})
    assert write_payload(tmp_path, {"a": FileProjection(b"1", 0o600)})
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("path", "message"), [
    ("/abs", "invalid path: must be relative path: /abs"),
    ("a/../b", "invalid path: must not contain '..': a/../b"),
    ("..data/x", "invalid path: must not start with '..': ..data/x"),
])
def test_bad_paths_are_refused_before_writing(tmp_path: Path, path: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        validate_path(path)
    assert str(caught.value) == message
    with pytest.raises(ValueError):
        write_payload(tmp_path / "t", {path: FileProjection(b"x")})
    assert not (tmp_path / "t").exists()
