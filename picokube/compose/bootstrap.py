"""The compose join step: make the init step's join token usable, as `picokube token create` does.

Run once the API servers answer (through the balancer), with the admin kubeconfig:
- publishes what joining needs (`picokube.bootstrap.ensure_join_objects`): the cluster-info
  ConfigMap in kube-public naming `--server` (the balancer), the role that lets anonymous
  clients read it, and kubeadm's bootstrap RBAC bindings;
- stores the token from `--join-dir` as a `bootstrap.kubernetes.io/token` Secret valid for
  `--ttl` from now (24h, kubeadm's default; 0: never expires), replacing an older Secret for
  the same token id, so every `docker compose up` gives the token a fresh lifetime.
The joining node needs the token only for its first certificate (it keeps the certificate
on its own volume), so a token that expired later harms nobody.

Retries while the API server is not yet answering, up to `--timeout`; exit 1 after that.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import httpx

from kube.bootstraptoken import parse_token
from kube.client.config import load_kubeconfig
from kube.duration import parse_go_duration
from picokube.bootstrap import create_token, delete_token, ensure_join_objects
from picokube.compose.init import JOIN_TOKEN_FILE

__all__ = ["main"]

DESCRIPTION = "the compose join token (docker-compose.ha.yml)"


def publish(kubeconfig: Path, *, server: str, token: str, ttl: dt.timedelta | None) -> None:
    """Steps above, once; RuntimeError/httpx.HTTPError when the API server refuses or is away."""
    admin = load_kubeconfig(kubeconfig)
    ensure_join_objects(admin, server=server)
    delete_token(admin, token)
    create_token(admin, ttl=ttl, token=token, description=DESCRIPTION)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m picokube.compose.bootstrap", description=__doc__.splitlines()[0])
    p.add_argument("--kubeconfig", type=Path, default=Path("/etc/picokube/kubeconfig"))
    p.add_argument("--server", required=True, help="the URL joining machines dial (the balancer's)")
    p.add_argument("--join-dir", type=Path, required=True)
    p.add_argument("--ttl", default="24h", help="how long the token stays valid (Go duration; 0: forever)")
    p.add_argument("--timeout", type=float, default=120.0)
    a = p.parse_args(argv)
    token = (a.join_dir / JOIN_TOKEN_FILE).read_text().strip()
    if parse_token(token) is None:
        print(f"error: {a.join_dir / JOIN_TOKEN_FILE} holds no bootstrap token; run the init step", file=sys.stderr)
        return 2
    try:
        seconds = parse_go_duration(a.ttl)
    except ValueError as e:
        print(f"error: --ttl: {e}", file=sys.stderr)
        return 2
    if seconds < 0:
        print(f"error: --ttl: {a.ttl} is negative (0 means a token that never expires)", file=sys.stderr)
        return 2
    ttl = dt.timedelta(seconds=seconds) if seconds else None
    deadline = time.monotonic() + a.timeout
    while True:
        try:
            publish(a.kubeconfig, server=a.server, token=token, ttl=ttl)
            break
        except (RuntimeError, httpx.HTTPError) as e:
            if time.monotonic() > deadline:
                print(f"error: could not store the join token: {e}", file=sys.stderr)
                return 1
            time.sleep(2.0)
    print(f"cluster-info names {a.server}; bootstrap token {token.split('.')[0]} stored "
          f"({'never expires' if ttl is None else f'valid {a.ttl}'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
