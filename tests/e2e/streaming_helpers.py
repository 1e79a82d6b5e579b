"""Driving the real kubectl's streaming commands in tests: piped, under tmux, and in the background."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from kube.testing.cluster import Cluster
from kube.testing.eventually import eventually_sync

__all__ = ["run_kubectl", "Terminal", "background", "http_get"]


def run_kubectl(cluster: Cluster, kubectl: Path, *args: str, stdin: str | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(kubectl), "--kubeconfig", str(cluster.kubeconfig), *args], check=False,
                          capture_output=True, text=True, input=stdin, timeout=timeout, env=cluster.env())


class Terminal:
    """A command in a tmux pane of a fixed size: keys typed in, the screen read back."""

    def __init__(self, cluster: Cluster, command: list[str], *, rows: int = 40, cols: int = 120) -> None:
        assert shutil.which("tmux"), "tmux is needed to drive a pseudo-terminal"
        self.session = f"pk-{uuid.uuid4().hex[:8]}"
        env = cluster.env()
        subprocess.run(["tmux", "new-session", "-d", "-s", self.session, "-x", str(cols), "-y", str(rows),
                        "-e", f"KUBECONFIG={env['KUBECONFIG']}", "-e", f"HOME={env['HOME']}",
                        " ".join(_quote(c) for c in command) + "; echo EXITED=$?; sleep 600"], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.session, "-l", text], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.session, "Enter"], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.session, "-S", "-200"], check=True,
                              capture_output=True, text=True).stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        def shown() -> str | None:
            screen = self.screen()
            return screen if text in screen else None
        return str(eventually_sync(shown, timeout=timeout, interval=0.2, message=f"{text!r} on the terminal"))

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.session], check=False, capture_output=True)


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


@contextlib.contextmanager
def background(cluster: Cluster, kubectl: Path | Sequence[str], *args: str) -> Iterator[subprocess.Popen[str]]:
    """kubectl (a binary, or a command line such as pkctl's) running until the block ends (then stopped)."""
    command = [str(kubectl)] if isinstance(kubectl, Path) else list(kubectl)
    proc = subprocess.Popen([*command, "--kubeconfig", str(cluster.kubeconfig), *args], env=cluster.env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def http_get(port: int, path: str = "/") -> str | None:
    """The body at localhost:port, or None while nothing answers there."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return str(r.read().decode())
    except OSError:
        return None
