"""This host's own address, for components that publish where they listen.

Shared by the cluster DNS (the address in the kube-dns Service's endpoints) and the
launcher (where it tells the DNS to listen).
"""

from __future__ import annotations

import socket

__all__ = ["host_address"]


def host_address() -> str:
    """The source address of this host's default route (127.0.0.1 without one); sends nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # connect on UDP only picks the route
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"
