"""Move this benchmark process into a private network namespace of its own.

A benchmark that runs a real proxy (or whole CRI nodes, with their bridges and NAT rules)
must not touch the host's iptables: other clusters on the same host program them too, and
`picokube down` would remove their rules. `unshare(CLONE_NEWNET)` gives the calling thread a
fresh namespace; every process and thread it starts afterwards (etcd, the API server, the
proxy, containerd, the CNI plugins) lives there too, and the kernel drops the namespace, with
every rule and bridge in it, when the last of them exits.

The namespace gets what a host has and the benchmark needs: loopback up (the API server
listens on 127.0.0.1) and a default route out of an otherwise unused veth pair, since
a connection to a cluster IP is routed before the proxy's DNAT rewrites it, and finds no
route at all in an empty namespace. Linux only; needs CAP_SYS_ADMIN (root).
"""

from __future__ import annotations

import ctypes
import os
import subprocess

__all__ = ["enter_private_netns"]

CLONE_NEWNET = 0x40000000
_SETUP = (
    ("ip", "link", "set", "lo", "up"),
    ("ip", "link", "add", "bench0", "type", "veth", "peer", "name", "bench1"),
    ("ip", "addr", "add", "192.0.2.1/24", "dev", "bench0"),  # TEST-NET-1: routes nowhere real
    ("ip", "link", "set", "bench1", "up"),
    ("ip", "link", "set", "bench0", "up"),
    ("ip", "route", "add", "default", "via", "192.0.2.254", "dev", "bench0"),
)


def enter_private_netns() -> str | None:
    """Move the calling thread (call it from the main thread, first) to a new network namespace.

    Returns None once inside, with loopback up and a default route, or why the process
    stays where it was (not root, unshare refused). RuntimeError when the namespace was made
    but could not be set up (no `ip`): the thread is then in it, and it is no place to run.
    """
    if os.geteuid() != 0:
        return "not root"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        return f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())}"
    for argv in _SETUP:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
        except OSError as e:
            raise RuntimeError(f"{' '.join(argv)}: {e}") from e
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {out.stderr.strip()}")
    return None
