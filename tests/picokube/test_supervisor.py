"""The supervisor over stand-in commands: restart on death, leave stopped ones, stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from kube.testing.eventually import eventually_sync
from picokube.state import process_matches, process_state
from picokube.supervisor import Backoff, describe_exit

from .conftest import Supervise, components, run_cli, sleeper


def running(data_dir: Path, *names: str) -> dict[str, dict[str, Any]]:
    """The records of `names` once each runs its recorded argv (asserts otherwise)."""
    recs = components(data_dir)
    for name in names:
        assert name in recs, f"{name} not in state.json yet"
        assert process_matches(recs[name]["pid"], recs[name]["argv"]), f"{name} not running"
    return recs


def test_restarts_a_component_killed_with_sigkill(supervise: Supervise) -> None:
    run = supervise([{"name": "alpha", "argv": sleeper("alpha")}, {"name": "beta", "argv": sleeper("beta")}])
    before = eventually_sync(lambda: running(run.data_dir, "alpha", "beta"), timeout=10)
    old_pid = before["alpha"]["pid"]
    log = run.data_dir / "logs" / "alpha.log"
    eventually_sync(lambda: "alpha up" in log.read_text(), timeout=10, message="alpha wrote to its log")

    os.kill(old_pid, signal.SIGKILL)

    def restarted() -> dict[str, dict[str, Any]]:
        recs = running(run.data_dir, "alpha")
        assert recs["alpha"]["pid"] != old_pid
        return recs

    after = eventually_sync(restarted, timeout=5, message="alpha restarted with a new pid")
    assert after["alpha"]["restarts"] == 1
    assert after["alpha"]["last_exit"] == "signal SIGKILL"
    assert after["beta"]["pid"] == before["beta"]["pid"], "an unrelated component was touched"
    assert not process_matches(old_pid, before["alpha"]["argv"])
    assert "alpha exited (signal SIGKILL)" in run.output()
    eventually_sync(lambda: log.read_text().count("alpha up") == 2,
                    timeout=5, message="both runs of alpha logged to logs/alpha.log")


def test_leaves_a_stopped_component_alone(supervise: Supervise) -> None:
    run = supervise([{"name": "alpha", "argv": sleeper("alpha")}])
    pid = eventually_sync(lambda: running(run.data_dir, "alpha"), timeout=10)["alpha"]["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        eventually_sync(lambda: process_state(pid) == "T", timeout=5, message="alpha stopped")
        # Watch for a while: it must stay the same, stopped, unrestarted process.
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            rec = running(run.data_dir, "alpha")["alpha"]
            assert (rec["pid"], rec["restarts"]) == (pid, 0)
            assert process_state(pid) == "T"
            time.sleep(0.1)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "exited" not in run.output()


def test_sigterm_stops_every_component_and_exits_zero(supervise: Supervise) -> None:
    run = supervise([{"name": n, "argv": sleeper(n)} for n in ("first", "second", "third")])
    recs = eventually_sync(lambda: running(run.data_dir, "first", "second", "third"), timeout=10)
    os.kill(recs["second"]["pid"], signal.SIGSTOP)  # a stopped one must be stopped too

    run.proc.send_signal(signal.SIGTERM)

    assert run.proc.wait(timeout=20) == 0
    for rec in recs.values():
        assert not process_matches(rec["pid"], rec["argv"]), f"{rec['name']} survived"
    assert not (run.data_dir / "state.json").exists()
    out = run.output()
    assert out.index("Stopping third") < out.index("Stopping second") < out.index("Stopping first")


def test_crash_looping_component_backs_off_and_records_exit_code(supervise: Supervise) -> None:
    crasher = [sys.executable, "-c", "import sys; sys.exit(3)"]
    run = supervise([{"name": "crasher", "argv": crasher}])

    def looped() -> dict[str, Any]:
        rec = components(run.data_dir)["crasher"]
        assert rec["restarts"] >= 2
        return rec

    rec = eventually_sync(looped, timeout=10, message="crasher restarted twice")
    assert rec["last_exit"] == "code 3"
    assert "restarting in 0.2s" in run.output() and "restarting in 0.4s" in run.output()


def test_ready_gate_holds_later_components(supervise: Supervise, tmp_path: Path) -> None:
    ready_file = tmp_path / "first-ready"
    run = supervise([{"name": "first", "argv": sleeper("first"), "ready_file": str(ready_file)},
                     {"name": "second", "argv": sleeper("second")}])
    eventually_sync(lambda: running(run.data_dir, "first"), timeout=10)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        assert components(run.data_dir)["second"]["pid"] is None, "second started before the gate opened"
        time.sleep(0.1)

    ready_file.touch()

    eventually_sync(lambda: running(run.data_dir, "second"), timeout=10, message="second started")


def test_a_second_supervisor_for_the_same_data_dir_is_refused(supervise: Supervise) -> None:
    first = supervise([{"name": "alpha", "argv": sleeper("alpha")}])
    eventually_sync(lambda: running(first.data_dir, "alpha"), timeout=10)
    second = supervise([{"name": "other", "argv": sleeper("other")}], data_dir=first.data_dir)
    assert second.proc.wait(timeout=20) != 0
    assert "ClusterLocked" in second.output()
    assert set(components(first.data_dir)) == {"alpha"}


def test_status_reports_supervised_components(supervise: Supervise) -> None:
    run = supervise([{"name": "kubelet-node-1", "argv": sleeper("k")}])
    rec = eventually_sync(lambda: running(run.data_dir, "kubelet-node-1"), timeout=10)["kubelet-node-1"]

    result = run_cli("status", "--data-dir", str(run.data_dir), "-o", "json")

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"apiserver", "etcd", "kubeconfig", "containerd_socket", "components"} <= set(doc)
    assert doc["components"][0] == {**doc["components"][0], "name": "kubelet-node-1", "pid": rec["pid"],
                                    "alive": True}
    assert doc["supervisor"] == {"pid": run.proc.pid, "alive": True}
    text = run_cli("status", "--data-dir", str(run.data_dir))
    assert text.returncode == 0 and "kubelet-node-1" in text.stdout


def test_backoff_doubles_up_to_the_cap() -> None:
    backoff = Backoff(initial=0.5, cap=4.0)
    assert [backoff.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_describe_exit() -> None:
    assert describe_exit(0) == "code 0"
    assert describe_exit(-9) == "signal SIGKILL"
