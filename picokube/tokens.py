"""The static bearer-token file that authenticates every identity of a local cluster.

kube-apiserver's `--token-auth-file` is a CSV file, one identity a line:

    token,user,uid,"group1,group2"

The fourth column is optional and is omitted for identities without groups. Each component
of a picokube cluster has its own identity, as in kubeadm: `admin` (group `system:masters`),
`system:kube-controller-manager`, `system:kube-scheduler`, `system:kube-proxy` (every node's
proxy, as kubeadm's kube-proxy binds to `system:node-proxier`), `system:kube-dns` (the cluster
DNS, bound to upstream's `system:kube-dns` role), and `system:node:<node>` (group
`system:nodes`) per kubelet.

Guarantees:
- Tokens are 32 random bytes, urlsafe base64. A token and uid once written for a user are
  kept by every later `ensure_token_file`, so kubeconfigs from an earlier `up` stay valid.
- The file is rewritten atomically with mode 0600 and lists exactly the requested identities.
"""

from __future__ import annotations

import csv
import io
import logging
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from picokube._files import write_file_atomic

__all__ = [
    "ADMIN_USER",
    "CONTROLLER_MANAGER_USER",
    "DNS_USER",
    "PROXY_USER",
    "SCHEDULER_USER",
    "Identity",
    "TokenEntry",
    "cluster_identities",
    "ensure_token_file",
    "node_user",
    "read_token_file",
]

logger = logging.getLogger(__name__)

ADMIN_USER = "admin"
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
SCHEDULER_USER = "system:kube-scheduler"
PROXY_USER = "system:kube-proxy"
DNS_USER = "system:kube-dns"


@dataclass(frozen=True)
class Identity:
    """A user the cluster knows: name and groups."""

    user: str
    groups: tuple[str, ...] = ()


@dataclass(frozen=True)
class TokenEntry:
    """One line of a token file."""

    token: str
    user: str
    uid: str
    groups: tuple[str, ...] = field(default=())


def node_user(node_name: str) -> str:
    """The user name a kubelet authenticates as (the Node authorizer's convention)."""
    return f"system:node:{node_name}"


def cluster_identities(node_names: Iterable[str]) -> list[Identity]:
    """Every identity a picokube cluster with these nodes needs, admin first."""
    return [
        Identity(ADMIN_USER, ("system:masters",)),
        Identity(CONTROLLER_MANAGER_USER),
        Identity(SCHEDULER_USER),
        Identity(PROXY_USER),
        Identity(DNS_USER),
        *(Identity(node_user(n), ("system:nodes",)) for n in node_names),
    ]


def read_token_file(path: Path) -> list[TokenEntry]:
    """Parse a token file; blank lines are skipped. Raises ValueError on a short line."""
    entries = []
    for row in csv.reader(io.StringIO(path.read_text())):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 3:
            raise ValueError(f"{path}: a line needs token,user,uid: {row[:2]!r}")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        entries.append(TokenEntry(row[0].strip(), row[1].strip(), row[2].strip(), groups))
    return entries


def ensure_token_file(path: Path, identities: Sequence[Identity]) -> dict[str, TokenEntry]:
    """Write `path` for `identities`, keeping tokens already issued; return entries by user."""
    previous: dict[str, TokenEntry] = {}
    if path.exists():
        try:
            previous = {e.user: e for e in read_token_file(path)}
        except (OSError, ValueError) as e:
            logger.warning("Unreadable token file %s, issuing new tokens: %s", path, e)
    entries: dict[str, TokenEntry] = {}
    for ident in identities:
        old = previous.get(ident.user)
        token = old.token if old else secrets.token_urlsafe(32)
        uid = old.uid if old else str(uuid.uuid4())
        entries[ident.user] = TokenEntry(token, ident.user, uid, ident.groups)
    write_file_atomic(path, _render(entries.values()).encode(), mode=0o600)
    return entries


def _render(entries: Iterable[TokenEntry]) -> str:
    lines = []
    for e in entries:
        line = f"{e.token},{e.user},{e.uid}"
        if e.groups:
            line += ',"' + ",".join(e.groups) + '"'
        lines.append(line)
    return "\n".join(lines) + "\n"
