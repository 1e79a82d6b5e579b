"""`picokube down` stops what the state names, and only processes that still run that argv."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kube.testing.eventually import eventually_sync
from picokube.state import process_matches, process_state, write_state

from .conftest import Supervise, components, run_cli, sleeper


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.kill()
        p.wait()


def spawn(procs: list[subprocess.Popen[bytes]], argv: list[str]) -> subprocess.Popen[bytes]:
    p = subprocess.Popen(argv, start_new_session=True)
    procs.append(p)
    eventually_sync(lambda: process_matches(p.pid, argv), timeout=10)
    return p


def test_down_with_nothing_running_succeeds(tmp_path: Path) -> None:
    result = run_cli("down", "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "nothing running" in result.stdout


def test_down_stops_the_supervisor_and_its_components(supervise: Supervise) -> None:
    run = supervise([{"name": n, "argv": sleeper(n)} for n in ("one", "two")])

    def both_running() -> dict[str, dict[str, Any]]:
        recs = components(run.data_dir)
        assert len(recs) == 2 and all(process_matches(c["pid"], c["argv"]) for c in recs.values())
        return recs

    recs = eventually_sync(both_running, timeout=10)

    result = run_cli("down", "--data-dir", str(run.data_dir))

    assert result.returncode == 0, result.stderr
    assert run.proc.wait(timeout=10) == 0
    assert not any(process_matches(c["pid"], c["argv"]) for c in recs.values())
    assert not (run.data_dir / "state.json").exists()


def test_down_kills_leftovers_of_a_dead_supervisor_but_never_a_recycled_pid(
        tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    ours = spawn(procs, sleeper("ours"))
    stopped = spawn(procs, sleeper("stopped"))
    os.kill(stopped.pid, signal.SIGSTOP)
    eventually_sync(lambda: process_state(stopped.pid) == "T", timeout=5)
    stranger = spawn(procs, sleeper("stranger"))
    write_state(tmp_path, {
        "supervisor": {"pid": 999_999_999, "argv": ["gone"]},
        "components": [
            {"name": "ours", "pid": ours.pid, "argv": sleeper("ours")},
            {"name": "stopped", "pid": stopped.pid, "argv": sleeper("stopped")},
            # The recorded pid now belongs to a process with another command line.
            {"name": "recycled", "pid": stranger.pid, "argv": sleeper("recorded")},
        ],
    })

    result = run_cli("down", "--data-dir", str(tmp_path))

    assert result.returncode == 0, result.stderr
    assert ours.wait(timeout=10) is not None
    assert stopped.wait(timeout=10) is not None
    assert stranger.poll() is None, "down signalled a process it did not start"
    assert not (tmp_path / "state.json").exists()
