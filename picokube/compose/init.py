"""The compose init step: credentials for every component, and the admin kubeconfig for the host.

Run once before the components start (`depends_on: condition: service_completed_successfully`):
- issues (or keeps) the CA, certificates, tokens and kubeconfigs in `--dir`, the volume every
  component mounts, with the API server at `--server` (its service name inside the network),
  and etcd's CA and certificates, its serving certificate naming `--etcd-host` (its service name);
- writes the admin kubeconfig again for the host, pointing at `--admin-server` (the published
  port), to `--admin-kubeconfig`, owned by whoever owns `--owner-of` (the repository
  directory, bind-mounted read-only), so the user who ran `docker compose up` can read it.

For the HA variant (docker-compose.ha.yml) it also:
- names `--apiserver-host` (the load balancer's service name) in the API server's serving
  certificate, as kubeadm's `--apiserver-cert-extra-sans`, since every kubeconfig names it;
- issues each `--etcd-member` its own serving and peer certificates in `pki/etcd/<member>/`;
- writes what a machine needs to join into `--join-dir` (a volume only the joining node
  mounts, never the one holding the keys): `token`, a bootstrap token in kubeadm's format,
  and `ca-cert-hash`, the `sha256:<hex>` of the cluster CA's public key. The token exists
  in the cluster only once `python -m picokube.compose.bootstrap` has stored it.

Idempotent: a second `up` keeps every credential (the join token too), so kubeconfigs
handed out stay valid.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kube.bootstraptoken import generate_token, parse_token
from kube.csr import ca_cert_hash
from picokube._files import make_private_dir, write_file_atomic
from picokube.credentials import issue_credentials
from picokube.kubeconfig import write_kubeconfig
from picokube.tokens import ADMIN_USER

__all__ = ["JOIN_HASH_FILE", "JOIN_TOKEN_FILE", "main", "parse_nodes", "write_join_files"]

JOIN_TOKEN_FILE = "token"
JOIN_HASH_FILE = "ca-cert-hash"


def parse_nodes(text: str) -> dict[str, tuple[str, ...]]:
    """`kubelet-1=172.28.0.11,kubelet-2=172.28.0.12` as {node: (ip,)}; ValueError naming the item."""
    nodes: dict[str, tuple[str, ...]] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, eq, ip = item.partition("=")
        if not eq or not name or not ip:
            raise ValueError(f"--nodes: {item!r} is not NAME=IP")
        nodes[name] = (ip, "127.0.0.1")
    return nodes


def _hand_over(path: Path, owner_of: Path | None) -> None:
    """chown `path` and the folders created for it to the owner of `owner_of`."""
    if owner_of is None or not owner_of.exists():
        return
    st = owner_of.stat()
    for p in (path, *path.parents):
        if p == owner_of or p == Path("/") or not p.exists() or p.stat().st_uid == st.st_uid:
            break
        os.chown(p, st.st_uid, st.st_gid)
    os.chown(path, st.st_uid, st.st_gid)


def write_join_files(join_dir: Path, ca_pem: bytes) -> str:
    """Keep (or create) the join token in `join_dir` and write the CA's hash beside it; the token."""
    make_private_dir(join_dir)
    token_file = join_dir / JOIN_TOKEN_FILE
    try:
        token = token_file.read_text().strip()
    except FileNotFoundError:
        token = ""
    if parse_token(token) is None:
        token = generate_token()
        write_file_atomic(token_file, f"{token}\n".encode(), mode=0o600)
    write_file_atomic(join_dir / JOIN_HASH_FILE, f"{ca_cert_hash(ca_pem)}\n".encode(), mode=0o644)
    return token


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m picokube.compose.init", description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=Path("/etc/picokube"))
    p.add_argument("--server", default="https://apiserver:6443")
    p.add_argument("--nodes", required=True, help="NAME=IP,... of the kubelet nodes")
    p.add_argument("--etcd-host", action="append", default=[],
                   help="a name or address etcd's certificates must carry (repeatable)")
    p.add_argument("--etcd-member", action="append", default=[],
                   help="a member of a multi-member etcd: its own certificates name it (repeatable)")
    p.add_argument("--apiserver-host", action="append", default=[],
                   help="one more name or address the API server's certificate names (repeatable)")
    p.add_argument("--join-dir", type=Path, default=None, help="where to write the join token and CA hash")
    p.add_argument("--admin-kubeconfig", type=Path, required=True)
    p.add_argument("--admin-server", default="https://127.0.0.1:6443")
    p.add_argument("--owner-of", type=Path, default=None)
    a = p.parse_args(argv)
    try:
        nodes = parse_nodes(a.nodes)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pki, tokens = issue_credentials(a.dir, server=a.server, nodes=nodes, etcd_hosts=a.etcd_host,
                                    etcd_members=a.etcd_member, apiserver_hosts=a.apiserver_host)
    if a.join_dir is not None:
        write_join_files(a.join_dir, pki.ca_pem())
    a.admin_kubeconfig.parent.mkdir(parents=True, exist_ok=True)
    write_kubeconfig(a.admin_kubeconfig, server=a.admin_server, ca_pem=pki.ca_pem(), user=ADMIN_USER,
                     token=tokens[ADMIN_USER])
    _hand_over(a.admin_kubeconfig, a.owner_of)
    print(f"credentials ready in {a.dir}; admin kubeconfig for the host: {a.admin_kubeconfig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
