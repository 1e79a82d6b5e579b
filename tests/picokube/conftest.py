"""Helpers for the launcher tests: run the real CLI and the real supervisor as subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import kube
from kube.testing.process import Process
from picokube.state import process_matches, read_state

REPO_ROOT = Path(kube.__file__).resolve().parent.parent

# Runs a Supervisor over stand-in commands: argv[1] is the data dir, argv[2] a JSON list of
# {"name", "argv", "ready_file"?}; a ready_file gates later components until it exists.
SUPERVISOR_DRIVER = """
import json, logging, sys
from pathlib import Path
from picokube.supervisor import Backoff, ComponentSpec, Supervisor

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(message)s")
data_dir, specs = Path(sys.argv[1]), json.loads(sys.argv[2])

def gate(path):
    return None if path is None else (lambda: Path(path).exists())

components = [ComponentSpec(s["name"], tuple(s["argv"]), ready=gate(s.get("ready_file"))) for s in specs]
sys.exit(Supervisor(data_dir=data_dir, components=components, grace=2.0,
                    backoff=Backoff(initial=0.2, cap=1.0)).run())
"""


def python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def sleeper(tag: str) -> list[str]:
    """A stand-in component: a Python process that sleeps until killed (tag tells them apart)."""
    # The argv must not contain the text printed, or the log header (which shows argv) would match.
    return [sys.executable, "-c", f"import time; print({tag!r} + ' up', flush=True); time.sleep(1000)"]


def run_cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "picokube", *args], capture_output=True, text=True, check=False,
                          env=python_env(), timeout=timeout, cwd=REPO_ROOT)


def components(data_dir: Path) -> dict[str, dict[str, Any]]:
    state = read_state(data_dir) or {}
    return {c["name"]: c for c in state.get("components", [])}


class SupervisorRun:
    """A supervisor subprocess over stand-in specs, its stdout in `log`."""

    def __init__(self, data_dir: Path, specs: list[dict[str, Any]]) -> None:
        self.data_dir = data_dir
        self.log = data_dir / "driver.out"
        self.proc = Process([sys.executable, "-c", SUPERVISOR_DRIVER, str(data_dir), json.dumps(specs)],
                            log_path=self.log, env=python_env()).start()

    def output(self) -> str:
        return self.proc.log()

    def stop(self) -> None:
        """Make sure nothing of this run survives the test, whatever the test did."""
        records = list(components(self.data_dir).values())
        self.proc.stop(grace=20)
        for rec in records:
            if process_matches(rec["pid"], rec["argv"]):
                os.killpg(rec["pid"], signal.SIGCONT)
                os.killpg(rec["pid"], signal.SIGKILL)


Supervise = Callable[..., SupervisorRun]


@pytest.fixture
def supervise(tmp_path: Path) -> Iterator[Supervise]:
    runs: list[SupervisorRun] = []

    def start(specs: list[dict[str, Any]], data_dir: Path | None = None) -> SupervisorRun:
        run = SupervisorRun(data_dir or tmp_path / "data", specs)
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.stop()
