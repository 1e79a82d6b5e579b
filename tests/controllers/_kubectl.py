"""Running the real kubectl against a test API server, as the admin or with another token."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from kube.testing.apiserver import ApiServerHarness

KUBECTL = str(Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent / "kubectl")


def kubectl(api: ApiServerHarness, *args: str, cache: Path, token: str | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`kubectl ARGS` as the admin (or as `token`'s owner); never raises on a non-zero exit."""
    auth = ("--token", token) if token else ()
    return subprocess.run([KUBECTL, "--kubeconfig", str(api.kubeconfig("admin")), "--cache-dir", str(cache),
                           *auth, *args], capture_output=True, text=True, input=stdin, timeout=60)
