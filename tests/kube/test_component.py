"""kube.component: what every entry point shares, exit codes and signals first.

`run_component` is driven in this process (its logging setup stubbed out, so pytest keeps
its log capture); the entry points' flag errors are checked as the real processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kube import component
from kube.client import KubeconfigError
from kube.component import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    parse_flags,
    run_component,
)


@pytest.fixture(autouse=True)
def _keep_pytest_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(component, "setup_logging", lambda *a, **k: None)


def _run(work: object, **kwargs: object) -> int:
    return run_component(work, name="test", log_level="INFO", **kwargs)  # type: ignore[arg-type]


def test_returning_work_exits_zero() -> None:
    async def work() -> None:
        await asyncio.sleep(0)

    assert _run(work) == EXIT_OK


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_cancels_the_work_and_exits_zero(sig: signal.Signals) -> None:
    cleaned: list[bool] = []

    async def work() -> None:
        try:
            os.kill(os.getpid(), sig)
            await asyncio.sleep(30)
        finally:
            cleaned.append(True)

    assert _run(work) == EXIT_OK
    assert cleaned == [True]


def test_on_stop_replaces_the_first_cancel_and_a_second_signal_cancels() -> None:
    stops: list[str] = []
    stopped = asyncio.Event()

    def on_stop() -> None:
        stops.append("graceful")
        stopped.set()

    async def work() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        async with asyncio.timeout(5):  # on_stop runs, and the work goes on
            await stopped.wait()
        assert stops == ["graceful"]
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(30)

    assert _run(work, on_stop=on_stop) == EXIT_OK


def test_known_failure_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    async def work() -> None:
        raise KubeconfigError("no such file")

    assert _run(work) == EXIT_FAILURE
    [record] = [r for r in caplog.records if r.name == "kube.component"]
    assert record.getMessage() == "Cannot load kubeconfig" and record.exc_info is None
    assert record.__dict__["error"] == "no such file"


def test_failure_inside_a_task_group_is_recognised(caplog: pytest.LogCaptureFixture) -> None:
    async def fail() -> None:
        raise OSError("address in use")

    async def work() -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(fail())

    assert _run(work, failures={OSError: "Cannot bind"}) == EXIT_FAILURE
    assert [r.getMessage() for r in caplog.records if r.name == "kube.component"] == ["Cannot bind"]


def test_unexpected_failure_logs_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    async def work() -> None:
        raise ZeroDivisionError

    assert _run(work) == EXIT_FAILURE
    [record] = [r for r in caplog.records if r.name == "kube.component"]
    assert record.exc_info is not None


def test_usage_error_exits_two(capsys: pytest.CaptureFixture[str]) -> None:
    def parse(argv: list[str] | None) -> int:
        raise UsageError("--x: not a number")

    with pytest.raises(SystemExit) as exited:
        parse_flags(parse, [], prog="thing")
    assert exited.value.code == EXIT_USAGE
    assert capsys.readouterr().err == "thing: error: --x: not a number\n"


@pytest.mark.parametrize("argv", [
    ["controllers", "--kubeconfig", "k", "--concurrent-deployment-syncs", "0"],
    ["controllers"],  # --kubeconfig is required
    ["controllers", "--kubeconfig", "k", "--root-ca-file", "/nonexistent/ca.crt"],
    ["controllers", "--kubeconfig", "k", "--root-ca-file", "/etc/hostname"],  # no certificate in it
    ["scheduler", "--config", "/nonexistent/scheduler.yaml"],
    ["kubelet", "--node-name", "n", "--node-capacity", "cpu"],
    ["apiserver", "--etcd-endpoints", "http://127.0.0.1:2379"],  # no TLS files
])
def test_entry_points_exit_two_on_bad_flags(argv: list[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=60, check=False,
                         env=env)
    assert out.returncode == EXIT_USAGE, out.stderr
    assert "error:" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(("argv", "elects"), [
    ([], True), (["--leader-elect"], True), (["--leader-elect=true"], True), (["--leader-elect=false"], False),
    (["--leader-elect=0"], False),
])
def test_leader_election_is_on_unless_turned_off(argv: list[str], elects: bool) -> None:
    import argparse

    from kube.component import add_leader_election_flags, leader_election_from_flags

    parser = argparse.ArgumentParser()
    add_leader_election_flags(parser, lease="kube-scheduler", what="schedule")
    election = leader_election_from_flags(parser.parse_args(argv), lease="kube-scheduler")
    assert (election is not None) is elects
    if election is not None:
        assert (election.name, election.lease_duration) == ("kube-scheduler", 15.0)
