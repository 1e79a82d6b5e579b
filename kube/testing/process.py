"""One child process of a test, started, waited for and stopped the same way everywhere.

Every harness (etcd, the API server, a component under test, the launcher's supervisor)
is a `Process`: it runs in its own session (so a signal meant for the test runner never
reaches it, and it can be killed with its children), appends its output to a log file
that a failing test prints, and is stopped for sure: SIGTERM, then SIGKILL after a grace
period. Mirrors controller-runtime envtest's `internal/testing/process.State`.

    with Process([sys.executable, "-m", "scheduler", ...], log_path=tmp_path / "scheduler.log") as p:
        p.wait_ready(lambda: ..., timeout=10)
        ...
    assert p.returncode == 0

A `Process` may be started again after it stopped or was killed (a restart keeps the log).
It is not thread-safe; drive each from one thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["Process"]


class Process:
    """A child process with a log file; see the module docstring for the guarantees."""

    def __init__(self, argv: Sequence[str], *, log_path: Path, env: Mapping[str, str] | None = None) -> None:
        self.argv = list(argv)
        """What `start` runs; may be changed between runs."""
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start `argv` (AssertionError if it still runs from an earlier start)."""
        assert not self.running, f"{self.argv[:3]} is already running"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                          start_new_session=True)
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None, "not started"
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit status of the last run (negative: killed by that signal); None while running."""
        return None if self.popen is None else self.popen.poll()

    def wait_ready(self, ready: Callable[[], bool], *, timeout: float = 30.0, interval: float = 0.05) -> None:
        """Poll `ready()` until it is true; RuntimeError if the process exits first, TimeoutError at the deadline.

        Both errors carry the end of the log. An exception from `ready()` counts as "not yet".
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"{self.argv[:3]} exited with {self.returncode}:\n{self.log(3000)}")
            with contextlib.suppress(Exception):  # a failing probe is "not yet"
                if ready():
                    return
            time.sleep(interval)
        raise TimeoutError(f"{self.argv[:3]} not ready after {timeout}s:\n{self.log(3000)}")

    def send_signal(self, sig: signal.Signals) -> None:
        assert self.popen is not None, "not started"
        self.popen.send_signal(sig)

    def wait(self, timeout: float = 10.0) -> int:
        """Wait for the current run to end; subprocess.TimeoutExpired if it does not in time."""
        assert self.popen is not None, "not started"
        return self.popen.wait(timeout=timeout)

    def kill(self) -> None:
        """SIGKILL the process and everything in its session, and reap it (a crash, as tests provoke)."""
        if self.running:
            assert self.popen is not None
            _kill_group(self.popen.pid)
            self.popen.wait()

    def stop(self, *, grace: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL after `grace` seconds; the exit status, None if never started.

        Idempotent: a process that already ended just reports how it ended.
        """
        if self.popen is None:
            return None
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.popen.returncode

    def log(self, tail: int | None = None) -> str:
        """The log so far (its last `tail` characters), empty before the first start."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return text if tail is None else text[-tail:]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
