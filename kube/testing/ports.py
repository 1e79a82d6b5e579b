"""Free TCP ports on 127.0.0.1 for test servers, and waiting for one to listen.

A port found free may be taken by someone else before it is used; tests accept that small
race (as envtest does) rather than passing sockets to children.
"""

from __future__ import annotations

import random
import socket
import time

__all__ = ["free_port", "free_port_pair", "free_port_run", "port_open", "wait_for_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port_run(count: int, low: int = 20000, high: int = 32000) -> int:
    """A port P such that P .. P + count - 1 are all free on 127.0.0.1 (an HA cluster's members).

    Chosen below the ephemeral range, as `free_port_pair`.
    """
    for _ in range(200):
        port = random.randrange(low, high - count)
        socks = [socket.socket() for _ in range(count)]
        try:
            for i, s in enumerate(socks):
                s.bind(("127.0.0.1", port + i))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
        return port
    raise RuntimeError(f"no {count} adjacent free ports between {low} and {high}")


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


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on host:port right now."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for_port(port: int, *, timeout: float = 20.0, host: str = "127.0.0.1") -> None:
    """Block until something accepts TCP connections on host:port; raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port, host):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s")
