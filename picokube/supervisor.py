"""A small process supervisor: start components in order, restart the dead, stop in reverse.

`picokube up` runs every part of a cluster (etcd, API server, controller-manager,
scheduler, kubelets) as its own OS process under one `Supervisor`. The supervisor knows
nothing about Kubernetes: it is driven by a list of `ComponentSpec`s (name, argv and an
optional readiness check), which is also how the tests drive it with stand-in commands.

Guarantees:
- Components start in list order. A component with a `ready` check gates the ones after
  it: they start only once the check returns True (the check is retried, and components
  that die meanwhile are restarted).
- Each component runs in a new session (its own process group), with stdin from
  /dev/null and stdout+stderr appended to `logs/<name>.log` in the data dir.
- A component that exits, for any reason and by any signal including SIGKILL, is restarted
  after an exponential backoff (0.5 s doubling up to 4 s; reset once it ran 10 s). Each
  exit and restart is logged with its exit code or signal. Leftovers in its process group
  are killed first so the new process finds its ports free.
- A stopped process (SIGSTOP) is alive: `Popen.poll` waits without WUNTRACED, so it is
  never mistaken for dead and is left alone, like a hung machine.
- `state.json` names the supervisor and every component (name, pid, argv, restarts) and is
  rewritten atomically on every start, exit and restart.
- SIGTERM, SIGINT or SIGHUP stop every component in reverse start order (SIGTERM plus
  SIGCONT, SIGKILL after `grace` seconds; a second signal skips the grace), remove
  `state.json` and make `run()` return 0. Only one supervisor per data dir: `run()` raises
  `ClusterLocked` when another holds the data dir's lock.

Mirrors, in miniature, what systemd's `Restart=always` with `RestartSec` backoff does for
kubeadm's static services.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO

from picokube.state import (
    cluster_lock,
    read_cmdline,
    remove_state,
    signal_group,
    write_state,
)

__all__ = ["Backoff", "ComponentSpec", "Supervisor", "describe_exit"]

logger = logging.getLogger(__name__)

TICK = 0.1
READY_INTERVAL = 0.25
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@dataclass(frozen=True)
class ComponentSpec:
    """One supervised process. `ready` (if set) must be quick and must not raise to mean no."""

    name: str
    argv: tuple[str, ...]
    ready: Callable[[], bool] | None = None
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    before_stop: Callable[[], None] | None = None
    """Called (errors logged) before the process is signalled at shutdown: drain what it runs."""
    after_stop: Callable[[], None] | None = None
    """Called (errors logged) once the process is gone at shutdown: clean up what it left."""


@dataclass(frozen=True)
class Backoff:
    """Restart delays: `initial * 2**n` capped at `cap`; n resets after `stable_after` s of uptime."""

    initial: float = 0.5
    cap: float = 4.0
    stable_after: float = 10.0

    def delay(self, failures: int) -> float:
        return float(min(self.initial * 2 ** failures, self.cap))


@dataclass
class _Component:
    spec: ComponentSpec
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    status: str = "pending"
    restarts: int = 0
    failures: int = 0
    started_mono: float = 0.0
    started_at: str | None = None
    restart_at: float | None = None
    last_exit: str | None = None
    pid: int | None = None


def _call_hook(hook: Callable[[], None] | None, name: str) -> None:
    if hook is None:
        return
    try:
        hook()
    except Exception:  # a failed cleanup must not stop the shutdown of the rest
        logger.exception("Shutdown hook of %s failed", name)


def describe_exit(returncode: int) -> str:
    """'code 1' or 'signal SIGKILL', from a Popen return code."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"code {returncode}"


class Supervisor:
    """Runs `components` for `data_dir` until asked to stop. Not thread-safe; one per process."""

    def __init__(self, *, data_dir: Path, components: Sequence[ComponentSpec],
                 info: Mapping[str, Any] | None = None, on_started: Callable[[], None] | None = None,
                 grace: float = 5.0, backoff: Backoff = Backoff()) -> None:
        self.data_dir = data_dir
        self.logs_dir = data_dir / "logs"
        self._components = [_Component(spec, self.logs_dir / f"{spec.name}.log") for spec in components]
        self._info = dict(info or {})
        self._on_started = on_started
        self._grace = grace
        self._backoff = backoff
        self._stop_requested = False
        self._force = False
        self._started_at = _now_iso()
        self._argv = read_cmdline(os.getpid()) or []

    def run(self) -> int:
        """Supervise until SIGTERM/SIGINT/SIGHUP (or `request_stop`); return 0 once all stopped.

        Raises ClusterLocked, before starting anything, if another supervisor owns the data dir.
        Must be called from the main thread (it installs signal handlers).
        """
        with cluster_lock(self.data_dir):
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
            try:
                self._write_state()
                if self._start_all() and self._on_started is not None:
                    self._on_started()
                while not self._stop_requested:
                    self._tick()
                    time.sleep(TICK)
            finally:
                self._stop_all()
                remove_state(self.data_dir)
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        logger.info("All components stopped")
        return 0

    def request_stop(self) -> None:
        """Ask `run()` to stop everything and return; safe to call from a signal handler."""
        if self._stop_requested:
            self._force = True
        self._stop_requested = True

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if not self._stop_requested:
            logger.info("Received %s, stopping", signal.Signals(signum).name)
        elif not self._force:
            logger.info("Received %s again, killing without grace", signal.Signals(signum).name)
        self.request_stop()

    def _start_all(self) -> bool:
        """Start components in order, honouring readiness gates; False if a stop came first."""
        for comp in self._components:
            if self._stop_requested:
                return False
            self._spawn(comp)
            if comp.spec.ready is not None and not self._wait_ready(comp):
                return False
        return True

    def _wait_ready(self, comp: _Component) -> bool:
        assert comp.spec.ready is not None
        logger.info("Waiting for %s to become ready", comp.spec.name)
        since = time.monotonic()
        next_probe, next_note = since, since + 15.0
        while not self._stop_requested:
            running = comp.proc is not None and comp.proc.poll() is None
            if running and time.monotonic() >= next_probe:
                if _check(comp.spec.ready):
                    logger.info("%s is ready (%.1fs)", comp.spec.name, time.monotonic() - since)
                    return True
                next_probe = time.monotonic() + READY_INTERVAL
            self._tick()
            if time.monotonic() >= next_note:
                logger.info("Still waiting for %s; see %s", comp.spec.name, comp.log)
                next_note += 15.0
            time.sleep(TICK)
        return False

    def _tick(self) -> None:
        """Notice exits and perform due restarts for every component started so far."""
        now = time.monotonic()
        for comp in self._components:
            if comp.status == "pending":
                continue
            if comp.restart_at is not None:
                if now >= comp.restart_at:
                    comp.restarts += 1
                    self._spawn(comp)
            elif comp.proc is not None and (code := comp.proc.poll()) is not None:
                signal_group(comp.proc.pid, signal.SIGKILL)  # leftovers in its group would hold its ports
                self._record_exit(comp, describe_exit(code), now)

    def _record_exit(self, comp: _Component, reason: str, now: float) -> None:
        uptime = now - comp.started_mono
        if uptime >= self._backoff.stable_after:
            comp.failures = 0
        delay = self._backoff.delay(comp.failures)
        comp.failures += 1
        comp.last_exit = reason
        comp.restart_at = now + delay
        comp.status = "restarting"
        logger.warning("%s exited (%s) after %.1fs, pid=%s; restarting in %.1fs",
                       comp.spec.name, reason, uptime, comp.pid, delay)
        self._write_state()

    def _spawn(self, comp: _Component) -> None:
        comp.restart_at = None
        comp.started_mono = time.monotonic()
        comp.started_at = _now_iso()
        with open(comp.log, "ab+") as log:
            _start_line(log)
            # The full command line once per `up`; restarts only get a short marker.
            what = f"restart {comp.restarts}" if comp.restarts else shlex.join(comp.spec.argv)
            log.write(f"--- {comp.started_at} starting {comp.spec.name}: {what}\n".encode())
            log.flush()
            try:
                comp.proc = subprocess.Popen(
                    comp.spec.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, close_fds=True,
                    env=dict(comp.spec.env) if comp.spec.env is not None else None, cwd=comp.spec.cwd)
            except OSError as e:
                log.write(f"--- cannot start {comp.spec.name}: {e}\n".encode())
                comp.proc, comp.pid = None, None
                self._record_exit(comp, f"cannot start: {e}", comp.started_mono)
                return
        comp.pid = comp.proc.pid
        comp.status = "running"
        if comp.restarts:
            logger.info("Restarted %s pid=%d (restart %d)", comp.spec.name, comp.pid, comp.restarts)
        else:
            logger.info("Started %s pid=%d", comp.spec.name, comp.pid)
        self._write_state()

    def _stop_all(self) -> None:
        for comp in reversed(self._components):
            proc = comp.proc
            was_running = comp.status == "running" and proc is not None and proc.poll() is None
            comp.status = "stopped"
            if not was_running or proc is None:
                continue
            logger.info("Stopping %s pid=%d", comp.spec.name, proc.pid)
            _call_hook(comp.spec.before_stop, comp.spec.name)
            signal_group(proc.pid, signal.SIGTERM)
            signal_group(proc.pid, signal.SIGCONT)  # a stopped process must run to die
            deadline = time.monotonic() + self._grace
            while proc.poll() is None and time.monotonic() < deadline and not self._force:
                time.sleep(0.05)
            if proc.poll() is None:
                logger.warning("Killing %s pid=%d, it did not stop in time", comp.spec.name, proc.pid)
                signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
            signal_group(proc.pid, signal.SIGKILL)  # whatever it left behind in its group
            _call_hook(comp.spec.after_stop, comp.spec.name)
            self._write_state()

    def _write_state(self) -> None:
        state: dict[str, Any] = {
            "version": 1,
            "data_dir": str(self.data_dir),
            "supervisor": {"pid": os.getpid(), "argv": self._argv, "started_at": self._started_at},
            **self._info,
            "components": [self._component_state(c) for c in self._components],
        }
        try:
            write_state(self.data_dir, state)
        except OSError as e:
            logger.error("Cannot write state.json: %s", e)

    @staticmethod
    def _component_state(comp: _Component) -> dict[str, Any]:
        return {
            "name": comp.spec.name,
            "pid": comp.pid,
            "argv": list(comp.spec.argv),
            "status": comp.status,
            "restarts": comp.restarts,
            "started_at": comp.started_at,
            "last_exit": comp.last_exit,
            "log": str(comp.log),
        }


def _start_line(log: BinaryIO) -> None:
    """Make the next write to the (append-mode) log begin a line; the last run may have died mid-line."""
    end = log.seek(0, os.SEEK_END)
    if end:
        log.seek(end - 1)
        if log.read(1) != b"\n":
            log.write(b"\n")


def _check(ready: Callable[[], bool]) -> bool:
    try:
        return bool(ready())
    except Exception as e:  # noqa: BLE001 - a failing probe only means "not yet"
        logger.debug("Readiness probe failed: %s", e)
        return False


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
