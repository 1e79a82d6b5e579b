"""Where the real kubectl of each minor version lives, for tests that drive them.

1.27-1.33 come with the machine image beside the `kubectl` version dispatcher on PATH
(`kubectl.1.NN` in the same folder); 1.34-1.36 are installed by
`hack/install-kubectl-versions` into $PICOKUBE_KUBECTL_DIR (default
/usr/local/lib/picokube/kubectl). `kubectl_binary` raises FileNotFoundError for a version
that is not installed, so a test that needs it fails (in CI) rather than passing unseen.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["KUBECTL_MINORS", "INSTALL_DIR", "kubectl_binary", "sdk_bin"]

KUBECTL_MINORS = tuple(range(27, 37))
INSTALL_DIR = Path(os.environ.get("PICOKUBE_KUBECTL_DIR", "/usr/local/lib/picokube/kubectl"))


def sdk_bin() -> Path:
    """The folder of the `kubectl` on PATH (the dispatcher and its versioned binaries)."""
    return Path(shutil.which("kubectl") or "/usr/bin/kubectl").resolve().parent


def kubectl_binary(minor: int) -> Path:
    """The real kubectl 1.`minor`; FileNotFoundError when it is not installed."""
    for folder in (sdk_bin(), INSTALL_DIR):
        candidate = folder / f"kubectl.1.{minor}"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(f"kubectl 1.{minor} is not installed (hack/install-kubectl-versions installs 1.34-1.36)")
