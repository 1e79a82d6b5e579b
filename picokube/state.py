"""The data dir's record of what runs (`state.json`), its lock, and process identity checks.

The supervisor is the only writer of `state.json`; `status`, `down` and `up` read it. It
names the supervisor and every component with pid and argv, so a reader can tell whether
a recorded pid is still *that* process: a pid counts as ours only while it exists, is not a
zombie, and its `/proc/<pid>/cmdline` equals the recorded argv. A recycled pid therefore
never matches, and `down` never signals a stranger.

`supervisor.lock` is held (flock) by the one live supervisor of a data dir for its whole
life; the kernel drops it when that process dies, however it dies. Holding it is what
"a cluster runs for this data dir" means.

Linux only: identity checks read /proc.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from picokube._files import write_file_atomic

__all__ = [
    "LOCK_FILE",
    "STATE_FILE",
    "ClusterLocked",
    "cluster_lock",
    "is_locked",
    "process_matches",
    "process_state",
    "read_cmdline",
    "read_state",
    "remove_state",
    "signal_group",
    "stop_process",
    "wait_gone",
    "write_state",
]

logger = logging.getLogger(__name__)

STATE_FILE = "state.json"
LOCK_FILE = "supervisor.lock"


class ClusterLocked(RuntimeError):
    """Another live process holds the data dir's lock."""


@contextlib.contextmanager
def cluster_lock(data_dir: Path) -> Iterator[None]:
    """Hold the data dir's lock for the `with` block; raise ClusterLocked when it is taken.

    The file descriptor is not inherited by children (O_CLOEXEC), so components never
    keep the lock alive after their supervisor is gone.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            raise ClusterLocked(str(data_dir)) from e
        yield
    finally:
        os.close(fd)


def is_locked(data_dir: Path) -> bool:
    """Whether some live process holds the data dir's lock right now."""
    try:
        with cluster_lock(data_dir):
            return False
    except ClusterLocked:
        return True


def read_state(data_dir: Path) -> dict[str, Any] | None:
    """The parsed `state.json`, or None when there is none (or it is unreadable)."""
    try:
        data = json.loads((data_dir / STATE_FILE).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        logger.warning("Ignoring unreadable %s: %s", data_dir / STATE_FILE, e)
        return None
    return data if isinstance(data, dict) else None


def write_state(data_dir: Path, state: dict[str, Any]) -> None:
    """Atomically replace `state.json` (mode 0644: it holds no secret)."""
    write_file_atomic(data_dir / STATE_FILE, (json.dumps(state, indent=2) + "\n").encode(), mode=0o644)


def remove_state(data_dir: Path) -> None:
    (data_dir / STATE_FILE).unlink(missing_ok=True)


def read_cmdline(pid: int) -> list[str] | None:
    """The argv of a live process, or None when it is gone, a zombie or unreadable."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    if not raw:  # zombies and kernel threads have an empty cmdline
        return None
    return [part.decode(errors="replace") for part in raw.rstrip(b"\0").split(b"\0")]


def process_state(pid: int) -> str | None:
    """The one-letter state from /proc/<pid>/stat (R, S, D, T, t, Z, ...), or None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; the state follows the last ')'.
    return stat[stat.rindex(")") + 2:].split(" ", 1)[0]


def process_matches(pid: int | None, argv: Sequence[str]) -> bool:
    """Whether `pid` is alive (not a zombie) and runs exactly `argv`."""
    if not pid or pid <= 0 or process_state(pid) in (None, "Z", "X"):
        return False
    return read_cmdline(pid) == list(argv)


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the process group `pgid`; False when no such group is left.

    Components run as session leaders, so their group id is their pid and the group holds
    whatever they spawned. The kernel never hands out a pid while a group of that id still
    exists, so signalling the group of a process we just reaped reaches only its leftovers.
    """
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def wait_gone(pid: int, argv: Sequence[str], *, timeout: float) -> bool:
    """Poll until `pid` no longer runs `argv`; True if it went within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while process_matches(pid, argv):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_process(pid: int | None, argv: Sequence[str], *, grace: float, group: bool = True) -> bool:
    """SIGTERM (plus SIGCONT, in case it is stopped) `pid`, SIGKILL it after `grace` seconds.

    With `group`, the signals go to its whole process group (a component and what it
    spawned). Does nothing unless `pid` still runs `argv`; True if a process was stopped.
    """
    if pid is None or not process_matches(pid, argv):
        return False

    def send(sig: int) -> None:
        if not (group and signal_group(pid, sig)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    send(signal.SIGTERM)
    send(signal.SIGCONT)
    if not wait_gone(pid, argv, timeout=grace):
        send(signal.SIGKILL)
        wait_gone(pid, argv, timeout=5.0)
    return True
