"""The API servers' load balancer: HAProxy from Debian, in TCP passthrough, health-checked.

With `--apiservers N` (N > 1) `picokube up` runs HAProxy as component `apiserver-lb` on
`--port`, the address every kubeconfig names. It passes TCP through untouched, so TLS ends
at an API server and client certificates still reach it. Each server is checked with
`GET /readyz` over TLS (verified against the cluster CA) every second; two failures mark it
down, which also closes the sessions already open to it (`on-marked-down
shutdown-sessions`): a client watching through a stopped or hung server sees its
connection end at once and reconnects, through the balancer, to a healthy one, rather
than waiting for its own idle timeout. Two successes bring a server back.

HAProxy runs in the foreground (`-db`) so the supervisor owns it like any component.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from picokube._files import write_file_atomic

__all__ = ["HAPROXY_CONFIG_NAME", "find_haproxy", "haproxy_command", "haproxy_config"]

HAPROXY_CONFIG_NAME = "haproxy.cfg"
CHECK_INTERVAL = "1s"


def find_haproxy() -> str:
    """The haproxy binary; FileNotFoundError naming the package when it is not installed."""
    for candidate in ("/usr/sbin/haproxy", shutil.which("haproxy")):
        if candidate and Path(candidate).exists():
            return candidate
    raise FileNotFoundError("--apiservers above 1 needs HAProxy: install the `haproxy` package")


def haproxy_config(*, port: int, servers: Mapping[str, int], ca_file: Path) -> str:
    """The configuration: a TCP frontend on 0.0.0.0:`port` over `servers` (name: port on 127.0.0.1)."""
    lines = [
        "global",
        "    maxconn 4096",
        "defaults",
        "    mode tcp",
        "    timeout connect 5s",
        # Watches are long and may be quiet between bookmarks: the clients and servers own idleness.
        "    timeout client 1h",
        "    timeout server 1h",
        "    timeout tunnel 1h",
        "frontend apiserver",
        f"    bind 0.0.0.0:{port}",
        "    default_backend apiservers",
        "backend apiservers",
        "    balance roundrobin",
        "    option httpchk GET /readyz",
        "    http-check expect status 200",
        f"    default-server check check-ssl verify required ca-file {ca_file} inter {CHECK_INTERVAL} "
        "fall 2 rise 2 on-marked-down shutdown-sessions",
    ]
    lines += [f"    server {name} 127.0.0.1:{server_port}" for name, server_port in servers.items()]
    return "\n".join(lines) + "\n"


def haproxy_command(config_path: Path, *, port: int, servers: Mapping[str, int], ca_file: Path) -> list[str]:
    """Write the configuration to `config_path` and return the argv that runs HAProxy on it."""
    write_file_atomic(config_path, haproxy_config(port=port, servers=servers, ca_file=ca_file).encode(), mode=0o644)
    return [find_haproxy(), "-db", "-f", str(config_path)]
