"""A whole cluster of real processes for end-to-end tests, started with `picokube up --detach`.

`start_cluster` yields a `Cluster` once every node is Ready and runs `picokube down` after,
printing the component logs when `up` failed. The helpers run the real `picokube`, `pkctl`
and `kubectl` against it with the cluster's kubeconfig.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kube.testing.ports import free_port_run

__all__ = ["Cluster", "start_cluster"]


@dataclass
class Cluster:
    data_dir: Path
    port: int

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.data_dir)}

    def picokube(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "picokube", *args, "--data-dir", str(self.data_dir)],
                              check=False, capture_output=True, text=True, timeout=timeout, env=self.env())

    def status(self) -> dict[str, Any]:
        out = self.picokube("status", "-o", "json")
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout))

    def pid_of(self, component: str) -> int:
        return next(int(c["pid"]) for c in self.status()["components"] if c["name"] == component)

    def pkctl(self, *args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kubectl", "--kubeconfig", str(self.kubeconfig), *args],
                              check=False, capture_output=True, text=True, timeout=timeout, input=stdin, env=self.env())

    def kubectl_ok(self, *args: str, stdin: str | None = None, timeout: float = 90) -> str:
        """The real kubectl's stdout; AssertionError (with its stderr) unless it exits 0."""
        out = subprocess.run(["kubectl", "--kubeconfig", str(self.kubeconfig), *args], check=False, capture_output=True,
                             text=True, timeout=timeout, input=stdin, env=self.env())
        assert out.returncode == 0, f"kubectl {' '.join(args)}: {out.stderr}{out.stdout}"
        return out.stdout

    def kubectl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["kubectl", "--kubeconfig", str(self.kubeconfig), *args], check=False,
                              capture_output=True, text=True, timeout=timeout, env=self.env())


def start_cluster(data_dir: Path, *extra: str) -> Iterator[Cluster]:
    # Room after each for the HA layout's members: API servers on --port + 1.., etcd members
    # on --etcd-port + 2i (and + 1).
    port, etcd_port = free_port_run(4), free_port_run(6)
    cluster = Cluster(data_dir, port)
    up = subprocess.run([sys.executable, "-m", "picokube", "up", "--detach", "--data-dir", str(data_dir),
                         "--port", str(port), "--etcd-port", str(etcd_port), *extra],
                        check=False, capture_output=True, text=True, timeout=180, env=cluster.env())
    try:
        assert up.returncode == 0, f"picokube up failed:\n{up.stdout}\n{up.stderr}"
        yield cluster
    finally:
        cluster.picokube("down")
        if up.returncode != 0:
            for log in sorted((data_dir / "logs").glob("*.log")):
                sys.stderr.write(f"--- {log.name}\n{log.read_text()[-3000:]}\n")
