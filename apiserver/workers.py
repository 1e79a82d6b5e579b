"""Several serving processes on one address (`--workers N`), for the cores one Python process cannot use.

One process keeps at most one core busy (the GIL). With `--workers N` this process binds N
listening sockets to the same address with SO_REUSEPORT, so the kernel spreads new
connections over them, and runs N workers: each `python -m apiserver` with the same flags and
one of the sockets by file descriptor. A worker is a whole API server on its own connection
to etcd, with its own watch caches fed by etcd's watch, as several API servers behind a
balancer are: a write accepted by one worker reaches watchers on every worker in revision
order, and a read at resourceVersion "" is answered from etcd whichever worker serves it.

What this process guarantees:
- it keeps every socket open, so connections the kernel queued for a worker that is starting
  or restarting wait for it instead of being refused;
- a worker that exits is started again after a backoff (1 s, doubling up to 30 s, back to 1 s
  once a worker has run a minute); a worker that exits 2 (its flags) ends this process;
- SIGTERM or SIGINT asks every worker for its graceful shutdown and waits up to 10 s before
  killing it; a second signal kills them at once, and so does this process's death (a worker
  asks the kernel for SIGKILL when its parent dies), so no worker outlives the server.

Divided or shared so that the server as a whole keeps what its flags say: the two
max-in-flight limits are divided among the workers (rounded up); only worker 0 compacts
etcd; every worker keeps spans in one span file (`--trace-store-file`, else one in a
temporary directory for this process's life), so a trace is whole whichever worker received
its spans; audit events are appended to the one `--audit-log-path`, a line per write. Per
worker: the per-user budget of long-running requests, the watch caches (memory grows with
N), and `/metrics`, which reports the worker that answered the scrape.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from apiserver.config import ApiServerConfig
from kube.component import run_component

__all__ = ["CannotListen", "WorkerPool", "WorkerRefusedFlags", "die_with_parent", "listening_sockets",
           "run_workers", "worker_argv"]

logger = logging.getLogger(__name__)

_BACKOFF_FIRST, _BACKOFF_MAX = 1.0, 30.0
_HEALTHY_RUN = 60.0  # seconds a worker must have run for its restart backoff to start over
_GRACE = 10.0  # seconds the workers get to finish after SIGTERM
_EXIT_USAGE = 2
_PR_SET_PDEATHSIG = 1


class CannotListen(Exception):
    """The address is taken or cannot be bound."""


class WorkerRefusedFlags(Exception):
    """A worker exited 2, refusing its flags: starting it again cannot help."""


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` sockets listening together on host:port (SO_REUSEPORT), inheritable; CannotListen if not.

    Port 0 takes one free port for all of them.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except OSError as e:
        raise CannotListen(f"{host}:{port}: {e}") from None
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(address)
            address = sock.getsockname()  # the same port for the rest, also when 0 was asked for
            sock.listen(2048)
            sock.set_inheritable(True)
    except OSError as e:
        for sock in sockets:
            sock.close()
        raise CannotListen(f"{host}:{port}: {e}") from None
    return sockets


def worker_argv(argv: Sequence[str], config: ApiServerConfig, *, index: int, listen_fd: int,
                trace_store: Path) -> list[str]:
    """Worker `index`'s command: this process's flags, then those that make it one of N (the later flag wins)."""
    n = config.workers
    extra = ["--workers", "1", "--listen-fd", str(listen_fd), "--trace-store-file", str(trace_store),
             "--max-requests-inflight", str(math.ceil(config.max_requests_inflight / n)),
             "--max-mutating-requests-inflight", str(math.ceil(config.max_mutating_requests_inflight / n))]
    if index > 0:
        extra += ["--etcd-compaction-interval", "0"]
    return [sys.executable, "-m", "apiserver", *argv, *extra]


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this worker when its parent dies; exit now if it already has."""
    parent = os.getppid()
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        logger.warning("Cannot ask to die with the parent", extra={"errno": ctypes.get_errno()})
    if parent == 1 or os.getppid() != parent:
        os._exit(1)


class WorkerPool:
    """N workers on N sockets, each kept running until `stop`."""

    def __init__(self, config: ApiServerConfig, argv: Sequence[str]) -> None:
        self.config, self.argv = config, list(argv)
        self._stopping = asyncio.Event()
        self._running: dict[int, asyncio.subprocess.Process] = {}

    def stop(self) -> None:
        """Ask every worker for its graceful shutdown; kill those still running after the grace period."""
        self._stopping.set()
        self._signal_all(signal.SIGTERM)
        asyncio.get_running_loop().call_later(_GRACE, self._signal_all, signal.SIGKILL)

    async def run(self, sockets: Sequence[socket.socket], trace_store: Path) -> None:
        """A worker on each socket, kept running until stopped; WorkerRefusedFlags if one refuses its flags."""
        try:
            async with asyncio.TaskGroup() as group:
                for index, sock in enumerate(sockets):
                    group.create_task(self._keep_running(index, sock, trace_store), name=f"worker-{index}")
        finally:
            self._signal_all(signal.SIGKILL)  # none left after a graceful stop; all of them when cancelled
            for proc in list(self._running.values()):
                await proc.wait()

    def _signal_all(self, sig: signal.Signals) -> None:
        for proc in self._running.values():
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)

    async def _keep_running(self, index: int, sock: socket.socket, trace_store: Path) -> None:
        backoff = _BACKOFF_FIRST
        while not self._stopping.is_set():
            started = time.monotonic()
            argv = worker_argv(self.argv, self.config, index=index, listen_fd=sock.fileno(),
                               trace_store=trace_store)
            # A session of its own: a signal to this process's group is this process's to pass on, once.
            proc = await asyncio.create_subprocess_exec(*argv, pass_fds=(sock.fileno(),), start_new_session=True)
            self._running[index] = proc
            if self._stopping.is_set():  # a stop that came while it started
                proc.send_signal(signal.SIGTERM)
            logger.info("Worker started", extra={"worker": index, "pid": proc.pid})
            code = await proc.wait()
            del self._running[index]
            if self._stopping.is_set():
                return
            if code == _EXIT_USAGE:
                raise WorkerRefusedFlags(f"worker {index} (pid {proc.pid}) exited 2; its error is above")
            if time.monotonic() - started >= _HEALTHY_RUN:
                backoff = _BACKOFF_FIRST
            logger.warning("Worker exited; starting it again",
                           extra={"worker": index, "pid": proc.pid, "code": code, "backoff": backoff})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)


def run_workers(config: ApiServerConfig, argv: Sequence[str]) -> int:
    """Bind, run `config.workers` workers until SIGTERM/SIGINT, and return the exit code."""
    pool = WorkerPool(config, argv)

    async def work() -> None:
        sockets = listening_sockets(config.bind_address, config.port, config.workers)
        spans_dir = None if config.trace_store_path else Path(tempfile.mkdtemp(prefix="apiserver-spans-"))
        try:
            logger.info("Serving with workers", extra={"workers": config.workers, "port": config.port})
            await pool.run(sockets, config.trace_store_path or Path(f"{spans_dir}/spans.jsonl"))
        finally:
            for sock in sockets:
                sock.close()
            if spans_dir is not None:
                shutil.rmtree(spans_dir, ignore_errors=True)

    return run_component(work, name="apiserver", log_level=config.log_level, on_stop=pool.stop,
                         failures={CannotListen: "Cannot listen on the API server's address",
                                   WorkerRefusedFlags: "A worker refused its flags"})
